package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    llm.ModelError
	}{
		{name: "400 context length", handler: status(400, nil, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			want: llm.ModelError{StatusCode: 400, Type: "invalid_request_error", Code: "context_length_exceeded"}},
		{name: "401", handler: status(401, nil, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			want: llm.ModelError{StatusCode: 401, Type: "invalid_request_error", Code: "invalid_api_key"}},
		{name: "403", handler: status(403, nil, `{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}}`),
			want: llm.ModelError{StatusCode: 403, Type: "request_forbidden", Code: "unsupported_country_region_territory"}},
		{name: "404", handler: status(404, nil, `{"error":{"message":"The model 'gpt-9' does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`),
			want: llm.ModelError{StatusCode: 404, Type: "invalid_request_error", Code: "model_not_found"}},
		{name: "429 quota is not retryable", handler: status(429, nil, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			want: llm.ModelError{StatusCode: 429, Type: "insufficient_quota", Code: "insufficient_quota"}},
		{name: "429 retry-after-ms", handler: status(429, map[string]string{"retry-after-ms": "1500", "Retry-After": "2"}, rateLimited),
			want: llm.ModelError{StatusCode: 429, Type: "tokens", Code: "rate_limit_exceeded", Retryable: true, RetryAfter: 1500e6}},
		{name: "500", handler: status(500, nil, `{"error":{"message":"The server had an error processing your request.","type":"server_error","param":null,"code":null}}`),
			want: llm.ModelError{StatusCode: 500, Type: "server_error", Retryable: true}},
		{name: "503 with Retry-After", handler: status(503, map[string]string{"Retry-After": "30"}, overloaded),
			want: llm.ModelError{StatusCode: 503, Type: "server_error", Retryable: true, RetryAfter: 30e9}},
		{name: "502 from a proxy, not JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html>Bad gateway</html>"))
		}, want: llm.ModelError{StatusCode: 502, Retryable: true}},
		{name: "404 in Ollama's format", handler: status(404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`),
			want: llm.ModelError{StatusCode: 404}},
		{name: "503 in a plain format", handler: status(503, map[string]string{"Retry-After": "1"}, `{"error":"Not Found","message":"busy"}`),
			want: llm.ModelError{StatusCode: 503, Retryable: true, RetryAfter: 1e9}},
		{name: "x-should-retry false", handler: status(500, map[string]string{"x-should-retry": "false"}, overloaded),
			want: llm.ModelError{StatusCode: 500, Type: "server_error"}},
		{name: "no choices", handler: status(200, nil, `{"id":"x","object":"chat.completion","choices":[]}`),
			want: llm.ModelError{}},
		{name: "not JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"x","choices":[{"message":}]}`))
		}, want: llm.ModelError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			m := newModel(t, s)
			resp, err := m.Request(t.Context(), conversation())
			if resp != nil {
				t.Errorf("a response with the error: %+v", resp)
			}
			me := modelError(t, err)
			got := llm.ModelError{StatusCode: me.StatusCode, Type: me.Type, Code: me.Code, Retryable: me.Retryable, RetryAfter: me.RetryAfter}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("error %v (-want +got):\n%s", err, d)
			}
			if me.StatusCode == 0 && !errors.Is(err, openai.ErrMalformedResponse) {
				t.Errorf("error %v does not match ErrMalformedResponse", err)
			}
			if len(s.requests()) != 1 {
				t.Errorf("%d requests sent, want 1 (the SDK's retries are off)", len(s.requests()))
			}
		})
	}
}

func TestConnectionErrors(t *testing.T) {
	s := newServer(t, status(200, nil, "{}"))
	m := newModel(t, s)
	s.Close() // refused from now on
	_, err := m.Request(t.Context(), conversation())
	if me := modelError(t, err); !me.Retryable || me.StatusCode != 0 {
		t.Errorf("refused connection: %v, retryable %v", err, me.Retryable)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = m.Request(ctx, conversation())
	if me := modelError(t, err); me.Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: %v, retryable %v", err, me.Retryable)
	}
	_, err = llm.Collect(m.Stream(ctx, conversation()))
	if me := modelError(t, err); me.Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("ended context, stream: %v, retryable %v", err, me.Retryable)
	}
}

// The key, the header values and the prompt never reach an error's text,
// even when the server quotes them back.
func TestErrorsKeepSecrets(t *testing.T) {
	const (
		header  = "hdr-secret-value-778899"
		org     = "org-secret-1234567"
		project = "proj_secret_7654321"
	)
	req := conversation()
	prompt := "Look up T-1 and check the weather in Paris."
	echo := func(w http.ResponseWriter, r *http.Request) {
		msg := fmt.Sprintf("Your prompt %q was refused. Incorrect API key provided: %s (also %s***%s). Header %s org %s project %s. Other keys: sk-otherkey-abcdefgh.",
			prompt, testKey, testKey[:8], testKey[len(testKey)-4:], header, org, project)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}})
		status(401, nil, string(b))(w, r)
	}
	streamEcho := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "bad key " + testKey + " for " + prompt, "type": "server_error"}})
		_, _ = w.Write([]byte("data: " + string(b) + "\n\n"))
	}
	for name, h := range map[string]http.HandlerFunc{"request": echo, "stream": streamEcho} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, h)
			m := newModel(t, s, openai.WithHeader("X-Custom-Auth", header), openai.WithOrganization(org), openai.WithProject(project))
			var err error
			if name == "request" {
				_, err = m.Request(t.Context(), req)
			} else {
				_, err = llm.Collect(m.Stream(t.Context(), req))
			}
			if err == nil {
				t.Fatal("no error")
			}
			r := s.requests()[0]
			if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("X-Custom-Auth") != header ||
				r.Header.Get("OpenAI-Organization") != org || r.Header.Get("OpenAI-Project") != project {
				t.Errorf("headers sent = %v", r.Header)
			}
			js, _ := json.Marshal(err)
			for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), string(js)} {
				for _, secret := range []string{testKey, testKey[:8], header, org, project, prompt, "otherkey"} {
					if strings.Contains(text, secret) {
						t.Errorf("error text holds %q: %s", secret, text)
					}
				}
			}
		})
	}
}

// A key from the environment is kept out of errors as one from an option.
func TestErrorsKeepEnvironmentKey(t *testing.T) {
	const envKey = "sk-proj-ENVIRONMENT-key-5566778899"
	t.Setenv("OPENAI_API_KEY", envKey)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + key + " (" + key[3:] + ").", "type": "invalid_request_error", "code": "invalid_api_key"}})
		status(401, nil, string(b))(w, r)
	})
	m, err := openai.New("gpt-4.1-mini", openai.WithHTTPClient(redirectTo(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}})
	if me := modelError(t, err); me.StatusCode != 401 || me.Provider != "openai" {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), envKey[3:]) {
		t.Errorf("error text holds the key: %v", err)
	}
}
