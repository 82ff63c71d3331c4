package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/weft-run/weft/llm"
)

// decode maps a complete message onto an llm.Response: its text blocks,
// concatenated in order, as Text; its tool_use blocks, in order, as
// ToolCalls (id, name, input as the arguments); its stop reason; its
// usage. Thinking and server-tool blocks have no place in llm.Response and
// are left out. A tool_use block without an id or name is an
// llm.ErrInvalidResponse.
func (m *Model) decode(msg *sdk.Message) (*llm.Response, error) {
	resp := &llm.Response{Model: m.name, FinishReason: finishReason(msg.StopReason)}
	var text strings.Builder
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, fmt.Errorf("%w: content block %d: tool_use without an id or a name", llm.ErrInvalidResponse, i)
			}
			args := []byte(b.Input)
			if len(args) == 0 {
				args = []byte("{}")
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: append([]byte(nil), args...)})
		}
	}
	resp.Text = text.String()
	u := msg.Usage
	resp.Usage = usage(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	return resp, nil
}

// usage maps the API's token counts. The API counts cache reads and cache
// writes apart from input_tokens; llm.Usage counts them as part of
// InputTokens, so they are added in.
func usage(input, output, cacheRead, cacheWrite int64) llm.Usage {
	return llm.Usage{
		InputTokens:      input + cacheRead + cacheWrite,
		OutputTokens:     output,
		CacheReadTokens:  cacheRead,
		CacheWriteTokens: cacheWrite,
		Requests:         1,
	}
}

// finishReason maps a stop reason onto llm's finish reasons; one it does
// not know (e.g. "pause_turn") is kept as it came.
func finishReason(r sdk.StopReason) llm.FinishReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return llm.FinishStop
	case sdk.StopReasonToolUse:
		return llm.FinishToolCalls
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.FinishLength
	case sdk.StopReasonRefusal:
		return llm.FinishContentFilter
	}
	return llm.FinishReason(r)
}
