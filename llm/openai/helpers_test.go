package openai_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

var update = flag.Bool("update", false, "re-record the golden request bodies in testdata/")

// recorded is one request the fake server received.
type recorded struct {
	Path   string
	Header http.Header
	Body   []byte
}

// server is an httptest server that answers with a handler and records
// every request.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// replay answers with a testdata file: JSON, or SSE when it ends in .sse.
func replay(t testing.TB, file string) http.HandlerFunc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if filepath.Ext(file) == ".sse" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(data)
	}
}

// newModel returns a model on s with a test key.
func newModel(t testing.TB, s *server, opts ...openai.Option) *openai.Model {
	t.Helper()
	m, err := openai.New("gpt-4.1-mini", append([]openai.Option{openai.WithBaseURL(s.URL + "/v1"), openai.WithAPIKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const testKey = "sk-test-0123456789abcdef-SECRET"

// golden compares body, indented, with testdata/name, or writes it there
// with -update.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to record it)", err)
	}
	if d := cmp.Diff(string(want), buf.String()); d != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, d)
	}
}

func ptr[T any](v T) *T { return &v }

// conversation is a request with everything llm.Request carries.
func conversation() *llm.Request {
	return &llm.Request{
		Instructions: "You are a careful operator.",
		Messages: []llm.Message{
			llm.SystemMessage("Earlier instructions."),
			llm.UserMessage("Look up T-1 and check the weather in Paris."),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Text{Text: "Looking both up."},
				llm.ToolCall{ID: "call_a", Name: "lookup", Arguments: json.RawMessage(`{"ticket_id":"T-1"}`)},
				llm.ToolCall{ID: "call_b", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				llm.ToolCall{ID: "call_c", Name: "lookup"},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolReturn{CallID: "call_a", Name: "lookup", Content: json.RawMessage(`{"status":"open"}`)},
				llm.UserPrompt{Text: "Also, be brief."},
				llm.ToolReturn{CallID: "call_b", Name: "weather", Content: llm.TextContent("sunny"), IsError: false},
				llm.RetryPrompt{CallID: "call_c", Name: "lookup", Message: "ticket_id is required", Retries: 1},
				llm.RetryPrompt{Message: "Answer in one line."},
			}},
		},
		Tools: []llm.ToolDefinition{
			{Name: "lookup", Description: "Look up a ticket.", Strict: true, Parameters: json.RawMessage(`{
				"type":"object",
				"properties":{
					"ticket_id":{"type":"string","minLength":3},
					"include_history":{"type":"boolean","default":false},
					"filter":{"type":"object","properties":{"since":{"type":"string","format":"date"},"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},"required":["since"]},
					"priority":{"enum":["low","high"],"type":"string"}
				},
				"required":["ticket_id"]}`)},
			{Name: "weather", Description: "Weather by city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		},
		Settings: llm.Settings{
			Temperature: ptr(0.2), TopP: ptr(0.9), MaxTokens: 256, StopSequences: []string{"END"}, Seed: ptr(int64(7)),
			Provider: map[string]json.RawMessage{"parallel_tool_calls": json.RawMessage(`true`), "user": json.RawMessage(`"u-42"`)},
		},
		Run: llm.RunInfo{SessionID: "s1", RunID: "r1", Step: 2},
	}
}

var errMalformed = openai.ErrMalformedResponse
