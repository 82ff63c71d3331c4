package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/weft-run/weft/llm"
)

// event is one server-sent event of a streamed message, as far as the
// adapter reads it. The adapter decodes events into it with encoding/json
// rather than into the SDK's MessageStreamEventUnion, whose reflective
// decoder costs several times more per chunk; the fields are the
// Messages streaming format's.
type event struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Usage eventUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string         `json:"type"`
		Text        string         `json:"text"`
		PartialJSON string         `json:"partial_json"`
		StopReason  sdk.StopReason `json:"stop_reason"`
	} `json:"delta"`
	Usage eventUsage `json:"usage"`
}

// eventUsage is a usage object of the stream; a count it does not carry
// is nil.
type eventUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// accumulator folds the events of a Messages stream into stream events
// and, at message_stop, the complete response. It decides only (no I/O),
// so the protocol rules are tested event by event.
type accumulator struct {
	name                           string
	started                        bool
	stopped                        bool
	blocks                         map[int64]*block // open and closed content blocks by index
	calls                          []*block         // tool_use blocks in order
	text                           strings.Builder
	reason                         sdk.StopReason
	in, out, cacheRead, cacheWrite int64
}

type block struct {
	kind     string // "text", "tool_use", or another type whose deltas are dropped
	call     int    // position among the tool calls, for tool_use
	id, name string
	args     strings.Builder
	closed   bool
}

func newAccumulator(name string) *accumulator {
	return &accumulator{name: name, blocks: map[int64]*block{}}
}

// add takes the next event and returns what to pass on (a zero event when
// there is nothing to) and whether the message is complete. An event out
// of protocol order is an ErrMalformedStream.
func (a *accumulator) add(ev *event) (llm.StreamEvent, error) {
	var out llm.StreamEvent
	if a.stopped {
		return out, fmt.Errorf("%w: %s after message_stop", ErrMalformedStream, ev.Type)
	}
	if !a.started && ev.Type != "message_start" {
		return out, fmt.Errorf("%w: %s before message_start", ErrMalformedStream, ev.Type)
	}
	switch ev.Type {
	case "message_start":
		if a.started {
			return out, fmt.Errorf("%w: a second message_start", ErrMalformedStream)
		}
		a.started = true
		a.setUsage(ev.Message.Usage)
	case "content_block_start":
		if _, dup := a.blocks[ev.Index]; dup {
			return out, fmt.Errorf("%w: content block %d started twice", ErrMalformedStream, ev.Index)
		}
		cb := ev.ContentBlock
		b := &block{kind: cb.Type}
		a.blocks[ev.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				a.text.WriteString(cb.Text)
				out.TextDelta = cb.Text
			}
		case "tool_use":
			if cb.ID == "" || cb.Name == "" {
				return out, fmt.Errorf("%w: content block %d: tool_use without an id or a name", llm.ErrInvalidResponse, ev.Index)
			}
			b.call, b.id, b.name = len(a.calls), cb.ID, cb.Name
			a.calls = append(a.calls, b)
			out.ToolCalls = []llm.ToolCallDelta{{Index: b.call, ID: b.id, Name: b.name}}
		}
	case "content_block_delta":
		b, err := a.open(ev.Index)
		if err != nil {
			return out, err
		}
		d := ev.Delta
		switch {
		case d.Type == "text_delta" && b.kind == "text":
			a.text.WriteString(d.Text)
			out.TextDelta = d.Text
		case d.Type == "input_json_delta" && b.kind == "tool_use":
			b.args.WriteString(d.PartialJSON)
			if d.PartialJSON != "" {
				out.ToolCalls = []llm.ToolCallDelta{{Index: b.call, ArgumentsDelta: d.PartialJSON}}
			}
		case d.Type == "text_delta" || d.Type == "input_json_delta":
			return out, fmt.Errorf("%w: %s in a %s block", ErrMalformedStream, d.Type, b.kind)
		}
	case "content_block_stop":
		b, err := a.open(ev.Index)
		if err != nil {
			return out, err
		}
		b.closed = true
	case "message_delta":
		a.reason = ev.Delta.StopReason
		// message_delta's counts are cumulative; those it carries win.
		a.setUsage(ev.Usage)
	case "message_stop":
		a.stopped = true
		resp, err := a.response()
		if err != nil {
			return out, err
		}
		out.Response = resp
	default:
		// New event types are additions within an API version: skip them.
	}
	return out, nil
}

func (a *accumulator) setUsage(u eventUsage) {
	for _, f := range []struct {
		dst *int64
		src *int64
	}{{&a.in, u.InputTokens}, {&a.out, u.OutputTokens}, {&a.cacheRead, u.CacheReadInputTokens}, {&a.cacheWrite, u.CacheCreationInputTokens}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
}

func (a *accumulator) open(i int64) (*block, error) {
	b, ok := a.blocks[i]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: content block %d was never started", ErrMalformedStream, i)
	case b.closed:
		return nil, fmt.Errorf("%w: content block %d already stopped", ErrMalformedStream, i)
	}
	return b, nil
}

// response is the complete answer, as decode would give for the same
// message.
func (a *accumulator) response() (*llm.Response, error) {
	resp := &llm.Response{
		Text:         a.text.String(),
		Model:        a.name,
		FinishReason: finishReason(a.reason),
		Usage:        usage(a.in, a.out, a.cacheRead, a.cacheWrite),
	}
	for _, b := range a.calls {
		if !b.closed {
			return nil, fmt.Errorf("%w: message_stop with tool_use block %q open", ErrMalformedStream, b.id)
		}
		args := b.args.String()
		if args == "" {
			args = "{}"
		}
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Arguments: []byte(args)})
	}
	return resp, nil
}

// empty reports whether ev carries nothing to pass on.
func empty(ev llm.StreamEvent) bool {
	return ev.TextDelta == "" && len(ev.ToolCalls) == 0 && ev.Response == nil
}
