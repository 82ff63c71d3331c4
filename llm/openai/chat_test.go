package openai_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
)

func TestChatRequestBody(t *testing.T) {
	tests := []struct {
		name   string
		req    *llm.Request
		golden string
	}{
		{name: "conversation", req: conversation(), golden: "chat_conversation.request.json"},
		{name: "prompt only", req: &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}}, golden: "chat_prompt.request.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, replay(t, "chat_text.response.json"))
			m := newModel(t, s)
			if _, err := m.Request(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			reqs := s.requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
				t.Fatalf("requests = %+v", reqs)
			}
			golden(t, tt.golden, reqs[0].Body)
		})
	}
}

func TestChatResponse(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   *llm.Response
	}{
		{name: "text", answer: "chat_text.response.json", want: &llm.Response{
			Text: "Ticket T-1 is open; Paris is sunny.", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishStop,
			Usage: llm.Usage{InputTokens: 1200, OutputTokens: 12, CacheReadTokens: 1024, Requests: 1},
		}},
		{name: "parallel tool calls", answer: "chat_tools.response.json", want: &llm.Response{
			Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishToolCalls,
			ToolCalls: []llm.ToolCall{
				// The null the model sent for the optional include_history
				// (made nullable for strict mode) is taken out.
				{ID: "call_1", Name: "lookup", Arguments: []byte(`{"ticket_id":"T-2"}`)},
				{ID: "call_2", Name: "weather", Arguments: []byte(`{"city":"Oslo"}`)},
			},
			Usage: llm.Usage{InputTokens: 300, OutputTokens: 40, Requests: 1},
		}},
		{name: "length", answer: "chat_length.response.json", want: &llm.Response{
			Text: "The answer is", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishLength,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 3, Requests: 1},
		}},
		{name: "refusal", answer: "chat_refusal.response.json", want: &llm.Response{
			Text: "I can't help with that.", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishContentFilter,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 6, Requests: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, replay(t, tt.answer))
			m := newModel(t, s)
			got, err := m.Request(t.Context(), conversation())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("response (-want +got):\n%s", d)
			}
		})
	}
}
