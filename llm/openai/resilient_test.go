package openai_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// The adapter's errors drive llm/resilient: a 429 and a 503 are retried
// (one HTTP request each, the SDK retrying none), a 401 is not.
func TestWithResilientRetry(t *testing.T) {
	tests := []struct {
		name         string
		answers      []http.HandlerFunc
		wantErr      bool
		wantRequests int
		wantAttempts int
	}{
		{name: "429 then 503 then an answer", answers: []http.HandlerFunc{
			status(429, map[string]string{"retry-after-ms": "1"}, rateLimited),
			status(503, nil, overloaded),
			replay(t, "chat_text.response.json"),
		}, wantRequests: 3, wantAttempts: 3},
		{name: "401 is final", answers: []http.HandlerFunc{
			status(401, nil, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`),
		}, wantErr: true, wantRequests: 1},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " streamed"}[streamed], func(t *testing.T) {
				var n atomic.Int32
				s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
					i := int(n.Add(1)) - 1
					if i >= len(tt.answers) {
						i = len(tt.answers) - 1
					}
					if streamed && i == len(tt.answers)-1 && !tt.wantErr {
						replay(t, "chat_stream_tools.sse")(w, r)
						return
					}
					tt.answers[i](w, r)
				})
				m := resilient.Retry(newModel(t, s), resilient.WithMaxAttempts(5), resilient.WithDelays(time.Millisecond, 10*time.Millisecond, 2))
				req := &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}}
				var resp *llm.Response
				var err error
				if streamed {
					resp, err = llm.Collect(llm.Stream(t.Context(), m, req))
				} else {
					resp, err = m.Request(t.Context(), req)
				}
				if (err != nil) != tt.wantErr {
					t.Fatalf("err = %v", err)
				}
				if got := len(s.requests()); got != tt.wantRequests {
					t.Errorf("%d HTTP requests, want %d", got, tt.wantRequests)
				}
				if resp != nil && (resp.Attempts != tt.wantAttempts || resp.Model != "openai-compatible:gpt-4.1-mini") {
					t.Errorf("attempts %d, model %q; want %d", resp.Attempts, resp.Model, tt.wantAttempts)
				}
			})
		}
	}
}
