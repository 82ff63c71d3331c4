package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"

	"github.com/openai/openai-go/v3/option"

	"github.com/weft-run/weft/llm"
)

// chatRequest sends req to Chat Completions, not streamed.
func (m *Model) chatRequest(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	p, strip, err := m.chatParams(req, false)
	if err != nil {
		return nil, m.fail(err)
	}
	var raw *http.Response
	cc, err := m.chat.New(ctx, p, option.WithResponseInto(&raw))
	if err != nil {
		return nil, m.failRequest(ctx, req, raw, err)
	}
	resp, err := m.chatResponse(cc, strip)
	if err != nil {
		return nil, m.failRequest(ctx, req, raw, err)
	}
	return resp, nil
}

// chatResponse maps a Chat Completions answer: the first choice's text
// (its refusal when it has no text) and tool calls, the finish reason and
// the usage.
func (m *Model) chatResponse(cc *openai.ChatCompletion, strip map[string]*nulls) (*llm.Response, error) {
	if len(cc.Choices) == 0 {
		return nil, fmt.Errorf("%w: no choices", ErrMalformedResponse)
	}
	ch := cc.Choices[0]
	resp := &llm.Response{Text: ch.Message.Content, Model: m.name, Usage: chatUsage(cc.Usage)}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("%w: tool call %q of type %q", ErrMalformedResponse, tc.ID, tc.Type)
		}
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{
			ID: tc.ID, Name: tc.Function.Name,
			Arguments: stripNulls(json.RawMessage(tc.Function.Arguments), strip[tc.Function.Name]),
		})
	}
	resp.FinishReason = finishReason(ch.FinishReason, len(resp.ToolCalls) > 0)
	if resp.Text == "" && ch.Message.Refusal != "" {
		resp.Text = ch.Message.Refusal
		resp.FinishReason = llm.FinishContentFilter
	}
	return resp, nil
}

func chatUsage(u openai.CompletionUsage) llm.Usage {
	return llm.Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		Requests:         1,
	}
}

// finishReason maps the API's finish reason onto llm's; an unknown one is
// kept as it came, a missing one derived from the tool calls.
func finishReason(r string, calls bool) llm.FinishReason {
	switch r {
	case "stop":
		return llm.FinishStop
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "":
		if calls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	}
	return llm.FinishReason(r)
}
