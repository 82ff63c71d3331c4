package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/weft-run/weft/llm"
)

// Stream sends req as a streamed Messages request when the sequence is
// iterated, and yields each text delta and each tool_use fragment as it
// comes (a tool call's first event carries its id and name, the next ones
// its input_json_delta pieces; Index is the call's position among the
// response's tool calls), then the complete llm.Response on the last
// event, at message_stop.
//
// An error before the stream starts (an error status), an error event in
// the stream (e.g. overloaded_error), an event that cannot be decoded or
// breaks the protocol's order, a connection that ends before message_stop,
// and a context that ended all yield one *llm.ModelError and end the
// sequence without a Response. When the consumer stops iterating, the
// connection is closed at once.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		params, err := m.encode(req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// What client.Messages.NewStreaming does, decoding into event.
		var raw *http.Response
		err = m.client.Post(ctx, "v1/messages", params, &raw, option.WithJSONSet("stream", true))
		s := ssestream.NewStream[event](ssestream.NewDecoder(raw), err)
		defer s.Close()
		acc := newAccumulator(m.name)
		for s.Next() {
			ev := s.Current()
			out, err := acc.add(&ev)
			if err != nil {
				yield(llm.StreamEvent{}, m.streamError(err))
				return
			}
			if empty(out) {
				continue
			}
			if !yield(out, nil) || out.Response != nil {
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(llm.StreamEvent{}, m.streamFail(ctx, err))
			return
		}
		yield(llm.StreamEvent{}, m.streamFail(ctx, fmt.Errorf("%w: the connection ended before message_stop", llm.ErrIncompleteStream)))
	}
}

// streamError is a protocol error the accumulator found: the same stream
// would break the same way, but another attempt gets another stream, so a
// malformed stream is worth retrying like a lost connection; a response
// that breaks the port's rules is not.
func (m *Model) streamError(err error) *llm.ModelError {
	me := m.modelError(err)
	me.Retryable = !errors.Is(err, llm.ErrInvalidResponse)
	return me
}

// streamFail is an error of the stream's reader: a decoding error is a
// malformed stream; anything else goes through fail.
func (m *Model) streamFail(ctx context.Context, err error) *llm.ModelError {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if (errors.As(err, &syntax) || errors.As(err, &typ)) && ctx.Err() == nil {
		return m.streamError(fmt.Errorf("%w: %v", ErrMalformedStream, err))
	}
	return m.fail(ctx, err)
}
