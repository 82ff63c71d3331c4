package llm

import (
	"context"
	"iter"
)

// Streamer is the optional role of a model that can stream its answer.
// Callers that want a stream use the package function Stream, which falls
// back to a one-chunk stream for models without this role.
//
// Stream sends req and returns the answer as a sequence of events. The
// request starts when the sequence is iterated, not before. On success
// the last event carries the complete Response (and earlier ones do not);
// on failure the sequence yields one (zero event, error) pair — a
// *ModelError as for Model.Request — and ends. Implementations stop
// promptly, releasing what they hold, when the consumer stops iterating
// or ctx is done. The same rules as Model.Request apply to req.
type Streamer interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[StreamEvent, error]
}

// StreamEvent is one chunk of a streamed answer.
type StreamEvent struct {
	// TextDelta is text added to the answer since the previous event.
	TextDelta string
	// ToolCalls are fragments of tool calls added since the previous event.
	ToolCalls []ToolCallDelta
	// Response is the complete answer; set on the last event only.
	Response *Response
}

// ToolCallDelta is a fragment of a tool call being streamed. The fragments
// of one call share its Index; ID and Name come with its first fragment,
// and the concatenated ArgumentsDelta values form its JSON arguments.
type ToolCallDelta struct {
	Index          int    // the call's position in the response
	ID             string // the call id; set on the call's first fragment
	Name           string // the tool name; set on the call's first fragment
	ArgumentsDelta string // the next piece of the JSON arguments
}

// Stream streams m's answer to req: through m's Stream method when m is a
// Streamer, otherwise as a one-chunk stream — a single event carrying the
// whole text, every tool call as one fragment, and the Response — or a
// single error. See Streamer for the rules of the sequence.
func Stream(ctx context.Context, m Model, req *Request) iter.Seq2[StreamEvent, error] {
	if s, ok := m.(Streamer); ok {
		return s.Stream(ctx, req)
	}
	return func(yield func(StreamEvent, error) bool) {
		resp, err := m.Request(ctx, req)
		if err != nil {
			yield(StreamEvent{}, err)
			return
		}
		ev := StreamEvent{TextDelta: resp.Text, Response: resp}
		if len(resp.ToolCalls) > 0 {
			ev.ToolCalls = make([]ToolCallDelta, len(resp.ToolCalls))
			for i, c := range resp.ToolCalls {
				ev.ToolCalls[i] = ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: string(c.Arguments)}
			}
		}
		yield(ev, nil)
	}
}

// Collect consumes seq and returns the final Response, or the first error.
// A sequence that ends without an event carrying a Response gives
// ErrIncompleteStream.
func Collect(seq iter.Seq2[StreamEvent, error]) (*Response, error) {
	var resp *Response
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Response != nil {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, ErrIncompleteStream
	}
	return resp, nil
}
