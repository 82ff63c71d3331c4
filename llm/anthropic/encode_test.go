package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
)

func ptr[T any](v T) *T { return &v }

// toolStep is an assistant turn with parallel tool calls and the user
// messages answering them: two tool returns in separate messages (merged
// into one user turn), a failed call, and a retry prompt.
func toolStep() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.Text{Text: "Let me check."},
			llm.ToolCall{ID: "toolu_01", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			llm.ToolCall{ID: "toolu_02", Name: "get_time", Arguments: json.RawMessage(`{"tz":"Europe/Paris"}`)},
			llm.ToolCall{ID: "toolu_03", Name: "lookup", Arguments: json.RawMessage(`{"q":`)},
			llm.ToolCall{ID: "toolu_04", Name: "search", Arguments: json.RawMessage(`{"query":"x"}`)},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.ToolReturn{CallID: "toolu_01", Name: "get_weather", Content: json.RawMessage(`{"temp_c":18,"sky":"clear"}`)},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.ToolReturn{CallID: "toolu_02", Name: "get_time", Content: llm.TextContent("14:05")},
			llm.RetryPrompt{CallID: "toolu_03", Name: "lookup", Message: "arguments are not valid JSON: unexpected end of input", Retries: 1},
			llm.ToolReturn{CallID: "toolu_04", Name: "search", Content: llm.TextContent("search backend unavailable"), IsError: true},
		}},
	}
}

func TestRequestBodies(t *testing.T) {
	weather := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name","minLength":1},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city"]}`)
	cases := []struct {
		name   string
		opts   []Option
		stream bool
		req    *llm.Request
	}{
		{name: "conversation", req: &llm.Request{
			Instructions: "You are terse.",
			Messages: append([]llm.Message{
				llm.SystemMessage("Recorded instructions from an earlier step."),
				llm.UserMessage("Weather and time in Paris?"),
			}, append(toolStep(),
				llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.RetryPrompt{Message: "Answer in one sentence."}, llm.UserPrompt{Text: ""}}},
				llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text{Text: "It is 18°C and clear, 14:05."}}},
				llm.UserMessage("Thanks."),
			)...),
		}},
		{name: "tools", req: &llm.Request{
			Messages: []llm.Message{llm.UserMessage("Weather?")},
			Tools: []llm.ToolDefinition{
				{Name: "get_weather", Description: "Current weather", Parameters: weather, Metadata: map[string]any{"approval_required": true}},
				{Name: "get_weather_strict", Description: "Current weather", Parameters: weather, Strict: true},
				{Name: "get_time"},
			},
		}},
		{name: "settings", req: &llm.Request{
			Messages: []llm.Message{llm.UserMessage("Count to ten.")},
			Settings: llm.Settings{
				MaxTokens:     256,
				StopSequences: []string{"7", "\n\nHuman:"},
				Provider: map[string]json.RawMessage{
					"metadata":     json.RawMessage(`{"user_id":"u-42"}`),
					"service_tier": json.RawMessage(`"standard_only"`),
				},
			},
		}},
		{name: "default_max_tokens", opts: []Option{WithMaxTokens(1000)}, req: &llm.Request{
			Messages: []llm.Message{llm.UserMessage("Hi")},
		}},
		{name: "ignored_settings", opts: []Option{WithIgnoreUnsupportedSettings()}, req: &llm.Request{
			Messages: []llm.Message{llm.UserMessage("Hi")},
			Settings: llm.Settings{Temperature: ptr(0.2), TopP: ptr(0.9), Seed: ptr(int64(7))},
		}},
		{name: "streamed", stream: true, req: &llm.Request{
			Instructions: "Be brief.",
			Messages:     []llm.Message{llm.UserMessage("Hi")},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reply := replyJSON(t, http.StatusOK, "response_text.json")
			if tc.stream {
				reply = replySSE(t, "stream_text.sse")
			}
			s := newServer(t, reply)
			m := s.model(t, tc.opts...)
			var err error
			if tc.stream {
				_, err = llm.Collect(m.Stream(t.Context(), tc.req))
			} else {
				_, err = m.Request(t.Context(), tc.req)
			}
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/v1/messages" {
				t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.Path)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q, want the bearer key", got)
			}
			if got := r.Header.Get("X-Stainless-Retry-Count"); got != "0" {
				t.Errorf("X-Stainless-Retry-Count = %q, want 0", got)
			}
			golden(t, "request_"+tc.name+".json", r.Body)
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	s := newServer(t, replyJSON(t, http.StatusOK, "response_text.json"))
	m := s.model(t, WithHeader("anthropic-beta", "fine-grained-tool-streaming-2025-05-14"), WithHeader("X-Trace", "a"), WithHeader("X-Trace", "b"))
	if _, err := m.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}}); err != nil {
		t.Fatal(err)
	}
	h := s.requests()[0].Header
	if got := h.Get("anthropic-beta"); got != "fine-grained-tool-streaming-2025-05-14" {
		t.Errorf("anthropic-beta = %q", got)
	}
	if got := h.Values("X-Trace"); len(got) != 1 || got[0] != "b" {
		t.Errorf("X-Trace = %q, want the last value only", got)
	}
	if got := h.Get("anthropic-version"); got == "" {
		t.Error("no anthropic-version header")
	}
}

// TestRequestRefused: what the adapter cannot send faithfully fails
// before anything reaches the server, as a non-retryable *llm.ModelError.
func TestRequestRefused(t *testing.T) {
	cases := []struct {
		name string
		req  *llm.Request
		want error
	}{
		{"nil request", nil, llm.ErrNilRequest},
		{"temperature", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{Temperature: ptr(0.0)}}, ErrUnsupportedSetting},
		{"top_p", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{TopP: ptr(1.0)}}, ErrUnsupportedSetting},
		{"seed", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{Seed: ptr(int64(1))}}, ErrUnsupportedSetting},
		{"negative max_tokens", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{MaxTokens: -1}}, ErrInvalidSetting},
		{"provider setting not JSON", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{Provider: map[string]json.RawMessage{"service_tier": json.RawMessage(`{`)}}}, ErrInvalidSetting},
		{"invalid message", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}}}, llm.ErrInvalidMessage},
		{"schema not JSON", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Tools: []llm.ToolDefinition{{Name: "t", Parameters: json.RawMessage(`{`)}}}, ErrInvalidTool},
		{"strict schema with open object", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Tools: []llm.ToolDefinition{{Name: "t", Strict: true, Parameters: json.RawMessage(`{"type":"object","additionalProperties":true}`)}}}, ErrStrictSchema},
		{"max_tokens needs streaming", &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{MaxTokens: 64000}}, ErrStreamingRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, replyJSON(t, http.StatusOK, "response_text.json"))
			m := s.model(t)
			_, err := m.Request(t.Context(), tc.req)
			me := asModelError(t, err)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if me.Retryable {
				t.Errorf("refused request is retryable: %v", err)
			}
			if n := len(s.requests()); n != 0 {
				t.Errorf("server got %d requests, want none", n)
			}
		})
	}
}

func TestMaxTokensNeedsStreamingStreams(t *testing.T) {
	s := newServer(t, replySSE(t, "stream_text.sse"))
	m := s.model(t)
	if _, err := llm.Collect(m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}, Settings: llm.Settings{MaxTokens: 64000}})); err != nil {
		t.Fatalf("stream with a large max_tokens: %v", err)
	}
	if body := string(s.requests()[0].Body); !strings.Contains(body, `"max_tokens":64000`) {
		t.Errorf("body %s, want max_tokens 64000", body)
	}
}

func asModelError(t *testing.T, err error) *llm.ModelError {
	t.Helper()
	var me *llm.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T), want a *llm.ModelError", err, err)
	}
	if me.Provider != Provider || me.Model != "claude-sonnet-4-5" {
		t.Errorf("ModelError names %s:%s, want anthropic:claude-sonnet-4-5", me.Provider, me.Model)
	}
	return me
}
