package console

import (
	"errors"
	"net/http"
	"testing"
)

// TestCallKeepsAPlainErrorText: an error answer that is not the API's
// JSON (a mux 405, a plain http.Error) keeps its text as the message.
func TestCallKeepsAPlainErrorText(t *testing.T) {
	tests := []struct {
		name, body, code, want string
	}{
		{"plain", "405 method not allowed\n", "", "405 method not allowed"},
		{"empty", "", "", ""},
		{"json", `{"error":{"code":"not_waiting","message":"the run does not wait"}}`, "not_waiting", "the run does not wait"},
		{"json without message", `{"error":{"code":"x"}}`, "x", `{"error":{"code":"x"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Console{api: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusMethodNotAllowed)
				_, _ = w.Write([]byte(tc.body))
			})}
			var ae *apiError
			if err := c.call(t.Context(), "", "GET", "/v1/x", nil, nil, nil); !errors.As(err, &ae) || ae.Code != tc.code || ae.Message != tc.want || ae.Status != http.StatusMethodNotAllowed {
				t.Errorf("call = %#v, want code %q message %q", err, tc.code, tc.want)
			}
		})
	}
}
