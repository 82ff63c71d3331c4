package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
)

func TestResponseDecoding(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		want    *llm.Response
	}{
		{"text", "response_text.json", &llm.Response{
			Text: "Hello! How can I help?", Model: "anthropic:claude-sonnet-4-5", FinishReason: llm.FinishStop,
			Usage: llm.Usage{InputTokens: 12, OutputTokens: 9, Requests: 1},
		}},
		// Thinking blocks are left out, text blocks concatenated, tool_use
		// blocks kept in order with their ids; cache reads and writes are
		// added into InputTokens.
		{"tool use", "response_tool_use.json", &llm.Response{
			Text: "I'll look up both.", Model: "anthropic:claude-sonnet-4-5", FinishReason: llm.FinishToolCalls,
			ToolCalls: []llm.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris", "unit": "celsius"}`)},
				{ID: "toolu_01B8b2q90qw90lq917835lq0", Name: "get_time", Arguments: json.RawMessage(`{}`)},
			},
			Usage: llm.Usage{InputTokens: 412 + 2048 + 100, OutputTokens: 96, CacheReadTokens: 2048, CacheWriteTokens: 100, Requests: 1},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, replyJSON(t, http.StatusOK, tc.fixture))
			m := s.model(t)
			got, err := m.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if got.Model != m.ModelName() || llm.NameOf(m) != "anthropic:claude-sonnet-4-5" {
				t.Errorf("Response.Model %q, ModelName %q, NameOf %q: want one name", got.Model, m.ModelName(), llm.NameOf(m))
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	cases := map[sdk.StopReason]llm.FinishReason{
		"end_turn":                      llm.FinishStop,
		"stop_sequence":                 llm.FinishStop,
		"tool_use":                      llm.FinishToolCalls,
		"max_tokens":                    llm.FinishLength,
		"model_context_window_exceeded": llm.FinishLength,
		"refusal":                       llm.FinishContentFilter,
		"pause_turn":                    "pause_turn",
	}
	for in, want := range cases {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResponseToolUseWithoutID(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"","name":"x","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`))
	})
	_, err := s.model(t).Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}})
	asModelError(t, err)
	if !errors.Is(err, llm.ErrInvalidResponse) {
		t.Errorf("error %v, want ErrInvalidResponse", err)
	}
}
