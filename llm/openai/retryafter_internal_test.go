package openai

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{name: "none", want: 0},
		{name: "seconds", header: map[string]string{"Retry-After": "20"}, want: 20 * time.Second},
		{name: "fractional seconds", header: map[string]string{"Retry-After": "0.5"}, want: 500 * time.Millisecond},
		{name: "HTTP date", header: map[string]string{"Retry-After": "Tue, 01 Dec 2026 12:01:30 GMT"}, want: 90 * time.Second},
		{name: "HTTP date past", header: map[string]string{"Retry-After": "Tue, 01 Dec 2026 11:00:00 GMT"}, want: 0},
		{name: "milliseconds first", header: map[string]string{"retry-after-ms": "250", "Retry-After": "1"}, want: 250 * time.Millisecond},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}, want: 0},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}
