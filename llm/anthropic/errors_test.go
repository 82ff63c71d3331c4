package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/weft-run/weft/llm"
)

// call sends one request the way mode says: Request, or Stream collected.
func call(ctx context.Context, m *Model, stream bool, req *llm.Request) (*llm.Response, error) {
	if stream {
		return llm.Collect(m.Stream(ctx, req))
	}
	return m.Request(ctx, req)
}

func hi() *llm.Request { return &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}} }

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		fixture    string
		header     []string
		typ        string
		retryable  bool
		retryAfter time.Duration
	}{
		{"429 with Retry-After", 429, "error_429.json", []string{"Retry-After", "17"}, "rate_limit_error", true, 17 * time.Second},
		{"529 overloaded", 529, "error_529.json", nil, "overloaded_error", true, 0},
		{"500", 500, "error_500.json", nil, "api_error", true, 0},
		{"503 the API says not to retry", 503, "error_500.json", []string{"x-should-retry", "false"}, "api_error", false, 0},
		{"400", 400, "error_400.json", nil, "invalid_request_error", false, 0},
		{"401", 401, "error_401.json", nil, "authentication_error", false, 0},
		{"403", 403, "error_403.json", nil, "permission_error", false, 0},
		{"404", 404, "error_404.json", nil, "not_found_error", false, 0},
	}
	for _, stream := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if stream {
				name += " streamed"
			}
			t.Run(name, func(t *testing.T) {
				s := newServer(t, replyJSON(t, tc.status, tc.fixture, tc.header...))
				resp, err := call(t.Context(), s.model(t), stream, hi())
				if resp != nil {
					t.Errorf("response %+v beside the error", resp)
				}
				me := asModelError(t, err)
				if me.StatusCode != tc.status || me.Type != tc.typ || me.Retryable != tc.retryable || me.RetryAfter != tc.retryAfter {
					t.Errorf("got status %d type %q retryable %v after %v, want %d %q %v %v (%v)",
						me.StatusCode, me.Type, me.Retryable, me.RetryAfter, tc.status, tc.typ, tc.retryable, tc.retryAfter, err)
				}
				if !errors.Is(err, ErrAPI) {
					t.Errorf("error %v does not match ErrAPI", err)
				}
				if retry, after := llm.IsRetryable(err); retry != tc.retryable || after != tc.retryAfter {
					t.Errorf("llm.IsRetryable = %v %v", retry, after)
				}
				if n := len(s.requests()); n != 1 {
					t.Errorf("server got %d requests, want 1 (the SDK's retries are off)", n)
				}
			})
		}
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}
	if got := retryAfter(h, now); got != 30*time.Second {
		t.Errorf("retryAfter(date) = %v, want 30s", got)
	}
	if got := retryAfter(http.Header{"Retry-After": {"soon"}}, now); got != 0 {
		t.Errorf("retryAfter(garbage) = %v, want 0", got)
	}
}

func TestConnectionErrors(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run("refused", func(t *testing.T) {
			s := newServer(t, replyJSON(t, 200, "response_text.json"))
			m := s.model(t)
			s.Close()
			_, err := call(t.Context(), m, stream, hi())
			me := asModelError(t, err)
			if !me.Retryable || me.StatusCode != 0 {
				t.Errorf("connection refused: retryable %v status %d, want retryable, no status (%v)", me.Retryable, me.StatusCode, err)
			}
		})
		t.Run("context cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				cancel()
				<-r.Context().Done()
			})
			_, err := call(ctx, s.model(t), stream, hi())
			me := asModelError(t, err)
			if me.Retryable || !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: retryable %v, error %v; want not retryable, context.Canceled", me.Retryable, err)
			}
		})
	}
}

func TestNewWithoutKey(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	_, err := New("claude-sonnet-4-5")
	asModelError(t, err)
	if !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("New without a key: %v, want ErrNoAPIKey", err)
	}
	if _, err := New("", WithAPIKey(testKey)); !errors.Is(err, ErrNoModelID) {
		t.Errorf("New without a model id: %v, want ErrNoModelID", err)
	}
	if _, err := New("m", WithAPIKey(testKey), WithMaxTokens(-1)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("New with WithMaxTokens(-1): %v, want ErrInvalidOption", err)
	}
}

func TestNewFromEnvironment(t *testing.T) {
	s := newServer(t, replyJSON(t, 200, "response_text.json"))
	t.Setenv(EnvAPIKey, "sk-ant-from-env-0123456789")
	t.Setenv(EnvBaseURL, s.URL)
	m, err := New("claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Request(t.Context(), hi()); err != nil {
		t.Fatal(err)
	}
	if got := s.requests()[0].Header.Get("Authorization"); got != "Bearer sk-ant-from-env-0123456789" {
		t.Errorf("Authorization = %q, want the key from the environment", got)
	}
}

// TestErrorsHoldNoSecrets: a server that echoes the key, a header value
// and the prompt back in its error body, in the message and beside it,
// gets none of them into the error's text, and the SDK's error (which
// holds the request and its headers) is not reachable through it.
func TestErrorsHoldNoSecrets(t *testing.T) {
	const (
		envKey  = "sk-ant-env-secret-9876543210"
		hdrVal  = "proxy-token-5f3a9c"
		prompt  = "my confidential prompt about project nightingale"
		echoFmt = `{"type":"error","error":{"type":"invalid_request_error","message":"bad key %s with header %s"},"echo":{"prompt":%q,"key":%q}}`
	)
	for _, stream := range []bool{false, true} {
		for _, fromEnv := range []bool{false, true} {
			t.Run("", func(t *testing.T) {
				key := testKey
				if fromEnv {
					key = envKey
				}
				s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(400)
					w.Write([]byte(sprintf(echoFmt, key, hdrVal, prompt, key)))
				})
				opts := []Option{WithBaseURL(s.URL), WithHTTPClient(s.Client()), WithHeader("X-Proxy-Auth", hdrVal)}
				if fromEnv {
					t.Setenv(EnvAPIKey, envKey)
				} else {
					opts = append(opts, WithAPIKey(testKey))
				}
				m, err := New("claude-sonnet-4-5", opts...)
				if err != nil {
					t.Fatal(err)
				}
				_, err = call(t.Context(), m, stream, &llm.Request{Instructions: prompt, Messages: []llm.Message{llm.UserMessage(prompt)}})
				asModelError(t, err)
				for _, secret := range []string{key, hdrVal, prompt, "nightingale"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error text holds %q: %v", secret, err)
					}
				}
				if !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("error text %q: want the API's message with the secrets redacted", err)
				}
				var api *sdk.Error
				if errors.As(err, &api) {
					t.Error("the SDK's error, holding the request, is reachable through the error")
				}
			})
		}
	}
}
