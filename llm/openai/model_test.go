package openai_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

// redirect sends every request to s, whatever host it names, so that the
// default endpoint can be tested without the network.
type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func redirectTo(t *testing.T, s *server) *http.Client {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: redirect{u}}
}

func TestNew(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	tests := []struct {
		name     string
		id       string
		opts     []openai.Option
		wantErr  error
		wantName string
	}{
		{name: "no key for OpenAI", id: "gpt-4.1-mini", wantErr: openai.ErrNoAPIKey},
		{name: "explicit empty key for OpenAI", id: "gpt-4.1-mini", opts: []openai.Option{openai.WithAPIKey("")}, wantErr: openai.ErrNoAPIKey},
		{name: "key for OpenAI", id: "gpt-4.1-mini", opts: []openai.Option{openai.WithAPIKey("k")}, wantName: "openai:gpt-4.1-mini"},
		{name: "compatible server without a key", id: "llama3", opts: []openai.Option{openai.WithBaseURL("http://localhost:11434/v1")}, wantName: "openai-compatible:llama3"},
		{name: "provider name", id: "llama3", opts: []openai.Option{openai.WithBaseURL("http://localhost:11434/v1"), openai.WithProviderName("ollama")}, wantName: "ollama:llama3"},
		{name: "empty model id", id: "", opts: []openai.Option{openai.WithAPIKey("k")}, wantErr: openai.ErrBadConfig},
		{name: "bad base URL", id: "x", opts: []openai.Option{openai.WithBaseURL("localhost:8080")}, wantErr: openai.ErrBadConfig},
		{name: "unknown API", id: "x", opts: []openai.Option{openai.WithAPIKey("k"), openai.WithAPI(openai.API(9))}, wantErr: openai.ErrBadConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := openai.New(tt.id, tt.opts...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("New = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if m.ModelName() != tt.wantName || llm.NameOf(m) != tt.wantName {
				t.Errorf("ModelName = %q, want %q", m.ModelName(), tt.wantName)
			}
		})
	}
}

// OPENAI_API_KEY goes to OpenAI's endpoint, never to another base URL; on
// OpenAI Settings.MaxTokens is max_completion_tokens, elsewhere max_tokens.
func TestEnvironmentKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	s := newServer(t, replay(t, "chat_text.response.json"))
	official, err := openai.New("gpt-4.1-mini", openai.WithHTTPClient(redirectTo(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	compatible, err := openai.New("llama3", openai.WithBaseURL(s.URL+"/v1"), openai.WithProviderName("ollama"))
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}, Settings: llm.Settings{MaxTokens: 50}}
	for _, m := range []*openai.Model{official, compatible} {
		resp, err := m.Request(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Model != m.ModelName() {
			t.Errorf("Response.Model = %q, want %q", resp.Model, m.ModelName())
		}
	}
	reqs := s.requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("OpenAI got Authorization %q", got)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "" {
		t.Errorf("the compatible server got Authorization %q", got)
	}
	var bodies [2]map[string]any
	for i := range bodies {
		if err := json.Unmarshal(reqs[i].Body, &bodies[i]); err != nil {
			t.Fatal(err)
		}
	}
	if bodies[0]["max_completion_tokens"] != 50.0 || bodies[0]["max_tokens"] != nil {
		t.Errorf("OpenAI body: %s", reqs[0].Body)
	}
	if bodies[1]["max_tokens"] != 50.0 || bodies[1]["max_completion_tokens"] != nil {
		t.Errorf("compatible body: %s", reqs[1].Body)
	}
}

func TestWithoutStreaming(t *testing.T) {
	s := newServer(t, replay(t, "chat_tools.response.json"))
	m := newModel(t, s, openai.WithoutStreaming())
	n := 0
	var resp *llm.Response
	for ev, err := range m.Stream(t.Context(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		resp = ev.Response
	}
	if n != 1 || resp == nil || len(resp.ToolCalls) != 2 {
		t.Fatalf("%d events, last response %+v", n, resp)
	}
	var body map[string]any
	_ = json.Unmarshal(s.requests()[0].Body, &body)
	if _, streamed := body["stream"]; streamed {
		t.Errorf("a streamed request was sent: %s", s.requests()[0].Body)
	}
}

func TestProviderSettings(t *testing.T) {
	tests := []struct {
		name     string
		provider map[string]json.RawMessage
		api      openai.API
		wantErr  error
	}{
		{name: "reserved chat field", provider: map[string]json.RawMessage{"messages": json.RawMessage(`[]`)}, wantErr: openai.ErrUnsupported},
		{name: "reserved responses field", provider: map[string]json.RawMessage{"input": json.RawMessage(`[]`)}, api: openai.Responses, wantErr: openai.ErrUnsupported},
		{name: "not JSON", provider: map[string]json.RawMessage{"user": json.RawMessage(`{`)}, wantErr: openai.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, replay(t, "chat_text.response.json"))
			m := newModel(t, s, openai.WithAPI(tt.api))
			req := &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}, Settings: llm.Settings{Provider: tt.provider}}
			_, err := m.Request(t.Context(), req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if me := modelError(t, err); me.Retryable {
				t.Error("retryable")
			}
			if n := len(s.requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// One model serves concurrent requests and streams (run under -race).
func TestConcurrentUse(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["stream"] == true {
			replay(t, "chat_stream_tools.sse")(w, r)
			return
		}
		replay(t, "chat_tools.response.json")(w, r)
	})
	m := newModel(t, s)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = m.Request(t.Context(), conversation())
			} else {
				_, err = llm.Collect(m.Stream(t.Context(), conversation()))
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
