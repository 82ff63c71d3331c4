package openai_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

// responsesConversation is conversation() without the settings the
// Responses API lacks.
func responsesConversation() *llm.Request {
	req := conversation()
	req.Settings.StopSequences, req.Settings.Seed = nil, nil
	return req
}

func TestResponsesRequest(t *testing.T) {
	s := newServer(t, replay(t, "responses_tools.response.json"))
	m := newModel(t, s, openai.WithAPI(openai.Responses))
	got, err := m.Request(t.Context(), responsesConversation())
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		Text: "Checking both.", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishToolCalls,
		ToolCalls: []llm.ToolCall{
			{ID: "call_R1", Name: "lookup", Arguments: []byte(`{"priority":"high","ticket_id":"T-3"}`)},
			{ID: "call_R2", Name: "weather", Arguments: []byte(`{"city":"Lima"}`)},
		},
		Usage: llm.Usage{InputTokens: 900, OutputTokens: 60, CacheReadTokens: 512, Requests: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	reqs := s.requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/responses" {
		t.Fatalf("requests = %+v", reqs)
	}
	golden(t, "responses_conversation.request.json", reqs[0].Body)
}

func TestResponsesFinish(t *testing.T) {
	s := newServer(t, replay(t, "responses_incomplete.response.json"))
	m := newModel(t, s, openai.WithAPI(openai.Responses))
	got, err := m.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if got.FinishReason != llm.FinishLength || got.Text != "The answer is" {
		t.Errorf("response = %+v", got)
	}
}

func TestResponsesUnsupportedSettings(t *testing.T) {
	s := newServer(t, replay(t, "responses_tools.response.json"))
	m := newModel(t, s, openai.WithAPI(openai.Responses))
	for name, set := range map[string]llm.Settings{"stop": {StopSequences: []string{"x"}}, "seed": {Seed: ptr(int64(1))}} {
		_, err := m.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}, Settings: set})
		if !errors.Is(err, openai.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
	if len(s.requests()) != 0 {
		t.Error("a request was sent")
	}
}

func TestResponsesStream(t *testing.T) {
	s := newServer(t, replay(t, "responses_stream_tools.sse"))
	m := newModel(t, s, openai.WithAPI(openai.Responses))
	var events []llm.StreamEvent
	for ev, err := range m.Stream(t.Context(), responsesConversation()) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	want := []llm.StreamEvent{
		{TextDelta: "On it"},
		{TextDelta: "."},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_X", Name: "lookup"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "call_Y", Name: "weather"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `{"ticket_id":`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ArgumentsDelta: `{"city":"Kyiv"}`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `"T-4","include_history":null}`}}},
		{Response: &llm.Response{
			Text: "On it.", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishToolCalls,
			ToolCalls: []llm.ToolCall{
				{ID: "call_X", Name: "lookup", Arguments: []byte(`{"ticket_id":"T-4"}`)},
				{ID: "call_Y", Name: "weather", Arguments: []byte(`{"city":"Kyiv"}`)},
			},
			Usage: llm.Usage{InputTokens: 1000, OutputTokens: 44, CacheReadTokens: 768, Requests: 1},
		}},
	}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	golden(t, "responses_conversation_stream.request.json", s.requests()[0].Body)
}

func TestResponsesStreamFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler func(t *testing.T) http.HandlerFunc
		want    llm.ModelError
	}{
		{name: "error event", handler: func(t *testing.T) http.HandlerFunc { return replay(t, "responses_stream_error.sse") },
			want: llm.ModelError{Type: "error", Code: "server_error", Retryable: true}},
		{name: "failed response", handler: func(t *testing.T) http.HandlerFunc { return replay(t, "responses_stream_failed.sse") },
			want: llm.ModelError{Type: "response_failed", Code: "rate_limit_exceeded", Retryable: true}},
		{name: "connection cut", handler: func(t *testing.T) http.HandlerFunc { return cutAfter(t, "responses_stream_tools.sse", 8) },
			want: llm.ModelError{Retryable: true}},
		{name: "clean end before completed", handler: func(t *testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hal\"}\n\n"))
			}
		}, want: llm.ModelError{Retryable: true}},
		{name: "429", handler: func(t *testing.T) http.HandlerFunc {
			return status(429, map[string]string{"Retry-After": "3"}, rateLimited)
		},
			want: llm.ModelError{StatusCode: 429, Type: "tokens", Code: "rate_limit_exceeded", Retryable: true, RetryAfter: 3e9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler(t))
			m := newModel(t, s, openai.WithAPI(openai.Responses))
			var gotErr error
			for ev, err := range m.Stream(t.Context(), responsesConversation()) {
				if err != nil {
					gotErr = err
				} else if ev.Response != nil {
					t.Fatalf("a final response: %+v", ev.Response)
				}
			}
			me := modelError(t, gotErr)
			got := llm.ModelError{StatusCode: me.StatusCode, Type: me.Type, Code: me.Code, Retryable: me.Retryable, RetryAfter: me.RetryAfter}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("error %v (-want +got):\n%s", gotErr, d)
			}
		})
	}
}
