package llm

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunked is a Streamer that streams its text two bytes at a time, then
// its tool calls one argument byte at a time.
type chunked struct {
	resp  Response
	calls int // events yielded, for the early-stop test
}

func (c *chunked) Request(ctx context.Context, req *Request) (*Response, error) {
	return Collect(c.Stream(ctx, req))
}

func (c *chunked) Stream(ctx context.Context, _ *Request) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		for i := 0; i < len(c.resp.Text); i += 2 {
			c.calls++
			if !yield(StreamEvent{TextDelta: c.resp.Text[i:min(i+2, len(c.resp.Text))]}, nil) {
				return
			}
		}
		for i, tc := range c.resp.ToolCalls {
			c.calls++
			if !yield(StreamEvent{ToolCalls: []ToolCallDelta{{Index: i, ID: tc.ID, Name: tc.Name}}}, nil) {
				return
			}
			for _, b := range tc.Arguments {
				c.calls++
				if !yield(StreamEvent{ToolCalls: []ToolCallDelta{{Index: i, ArgumentsDelta: string(b)}}}, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(StreamEvent{}, &ModelError{Model: "chunked", Err: err})
			return
		}
		c.calls++
		yield(StreamEvent{Response: c.resp.Clone()}, nil)
	}
}

// assemble rebuilds text and tool calls from the deltas of seq, and returns
// the final response too.
func assemble(t *testing.T, seq iter.Seq2[StreamEvent, error]) (text string, calls []ToolCall, final *Response, events int, err error) {
	t.Helper()
	for ev, err := range seq {
		if err != nil {
			return text, calls, final, events, err
		}
		events++
		text += ev.TextDelta
		for _, d := range ev.ToolCalls {
			if d.Index == len(calls) {
				calls = append(calls, ToolCall{ID: d.ID, Name: d.Name})
			}
			calls[d.Index].Arguments = append(calls[d.Index].Arguments, d.ArgumentsDelta...)
		}
		if ev.Response != nil {
			final = ev.Response
		}
	}
	return text, calls, final, events, nil
}

func TestStream(t *testing.T) {
	resp := Response{
		Text:      "adding now",
		ToolCalls: []ToolCall{{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"left":2}`)}, {ID: "c2", Name: "now", Arguments: json.RawMessage(`{}`)}},
	}
	tests := []struct {
		name       string
		model      Model
		wantEvents int
	}{
		{"a model without the role: one chunk", NewScripted(resp), 1},
		{"a streamer: its own chunks", &chunked{resp: resp}, 5 + 1 + 10 + 1 + 2 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, calls, final, events, err := assemble(t, Stream(t.Context(), tt.model, &Request{}))
			if err != nil {
				t.Fatal(err)
			}
			if events != tt.wantEvents {
				t.Errorf("%d events, want %d", events, tt.wantEvents)
			}
			if final == nil {
				t.Fatal("no event carried the final response")
			}
			if text != resp.Text {
				t.Errorf("assembled text %q, want %q", text, resp.Text)
			}
			if diff := cmp.Diff(resp.ToolCalls, calls); diff != "" {
				t.Errorf("assembled tool calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(resp.ToolCalls, final.ToolCalls); diff != "" {
				t.Errorf("final tool calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamError(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		model  Model
		wantIs error
	}{
		{"one-chunk stream of a used-up script", t.Context(), NewScripted(), ErrNoResponses},
		{"one-chunk stream whose context ended", cancelled, AlwaysText("abc"), context.Canceled},
		{"streamer whose context ended", cancelled, &chunked{resp: ScriptText("abc")}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := Collect(Stream(tt.ctx, tt.model, &Request{}))
			if !errors.Is(err, tt.wantIs) || resp != nil {
				t.Fatalf("Collect = %v, %v; want nil and an error matching %v", resp, err, tt.wantIs)
			}
			if _, ok := errors.AsType[*ModelError](err); !ok {
				t.Errorf("error %v is not a *ModelError", err)
			}
		})
	}
}

func TestStreamStopsWhenTheConsumerStops(t *testing.T) {
	c := &chunked{resp: ScriptText("abcdefgh")}
	for range Stream(t.Context(), c, &Request{}) {
		break
	}
	if c.calls != 1 {
		t.Errorf("the streamer yielded %d events after the consumer stopped at the first", c.calls)
	}
}

func TestCollect(t *testing.T) {
	final := &Response{Text: "ab"}
	tests := []struct {
		name   string
		events []StreamEvent
		err    error // yielded after the events when not nil
		want   *Response
		wantIs error
	}{
		{"final response", []StreamEvent{{TextDelta: "a"}, {TextDelta: "b"}, {Response: final}}, nil, final, nil},
		{"no final response", []StreamEvent{{TextDelta: "a"}}, nil, nil, ErrIncompleteStream},
		{"empty stream", nil, nil, nil, ErrIncompleteStream},
		{"error after deltas", []StreamEvent{{TextDelta: "a"}}, context.DeadlineExceeded, nil, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := func(yield func(StreamEvent, error) bool) {
				for _, ev := range tt.events {
					if !yield(ev, nil) {
						return
					}
				}
				if tt.err != nil {
					yield(StreamEvent{}, tt.err)
				}
			}
			got, err := Collect(seq)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("Collect error %v, want %v", err, tt.wantIs)
			}
			if got != tt.want {
				t.Errorf("Collect = %+v, want %+v", got, tt.want)
			}
		})
	}
}
