package openai

import (
	"context"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/weft-run/weft/llm"
)

// responsesStream sends req to the Responses API as a stream and yields its
// text and function-call argument deltas, then the complete Response,
// taken from the response.completed (or .incomplete) event.
func (m *Model) responsesStream(ctx context.Context, req *llm.Request, yield func(llm.StreamEvent, error) bool) {
	p, strip, err := m.responsesParams(req)
	if err != nil {
		yield(llm.StreamEvent{}, m.fail(err))
		return
	}
	var raw *http.Response
	s := m.responses.NewStreaming(ctx, p, option.WithResponseInto(&raw))
	defer s.Close()
	calls := map[int64]int{} // output index -> position among the calls
	for s.Next() {
		e := s.Current()
		var ev llm.StreamEvent
		switch e.Type {
		case "response.output_text.delta", "response.refusal.delta":
			ev.TextDelta = e.Delta
		case "response.output_item.added":
			if e.Item.Type == "function_call" {
				i := len(calls)
				calls[e.OutputIndex] = i
				ev.ToolCalls = []llm.ToolCallDelta{{Index: i, ID: e.Item.CallID, Name: e.Item.Name, ArgumentsDelta: e.Item.Arguments.OfString}}
			}
		case "response.function_call_arguments.delta":
			i, ok := calls[e.OutputIndex]
			if !ok {
				yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, &malformedError{err: errorf("arguments delta for output %d, which is no function call", e.OutputIndex)}))
				return
			}
			ev.ToolCalls = []llm.ToolCallDelta{{Index: i, ArgumentsDelta: e.Delta}}
		case "response.completed", "response.incomplete", "response.failed":
			resp, err := m.responsesResponse(&e.Response, strip)
			if err != nil {
				yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
				return
			}
			// The final event; whatever follows is not read.
			yield(llm.StreamEvent{Response: resp}, nil)
			return
		case "error":
			yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, &streamFailure{typ: "error", code: e.Code, msg: e.Message}))
			return
		}
		if ev.TextDelta == "" && len(ev.ToolCalls) == 0 {
			continue
		}
		if !yield(ev, nil) {
			return
		}
	}
	if err := s.Err(); err != nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
		return
	}
	yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, &connectionError{
		msg: "stream ended before the response completed", err: io.ErrUnexpectedEOF,
	}))
}
