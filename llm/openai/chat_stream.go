package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/openai/openai-go/v3/option"

	"github.com/weft-run/weft/llm"
)

// chatStream sends req to Chat Completions as a stream (with the usage
// chunk requested) and yields its deltas, then the complete Response.
func (m *Model) chatStream(ctx context.Context, req *llm.Request, yield func(llm.StreamEvent, error) bool) {
	p, strip, err := m.chatParams(req, true)
	if err != nil {
		yield(llm.StreamEvent{}, m.fail(err))
		return
	}
	var raw *http.Response
	s := m.chat.NewStreaming(ctx, p, option.WithResponseInto(&raw))
	defer s.Close()
	var acc chatAccumulator
	for s.Next() {
		ev, err := acc.add(s.Current())
		if err != nil {
			yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
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
	if !acc.finished {
		// The body ended, cleanly or not, before a finish reason: a cut.
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, &connectionError{
			msg: "stream ended before the answer finished", err: io.ErrUnexpectedEOF,
		}))
		return
	}
	yield(llm.StreamEvent{Response: acc.response(m.name, strip)}, nil)
}

// chatAccumulator builds the Response of a Chat Completions stream from
// its chunks.
type chatAccumulator struct {
	text     strings.Builder
	calls    []*callAcc // by first appearance
	byIndex  map[int64]*callAcc
	reason   string
	finished bool
	usage    llm.Usage
}

type callAcc struct {
	index    int64
	id, name string
	args     strings.Builder
}

// add takes one chunk's deltas and returns them as an event.
func (a *chatAccumulator) add(c openai.ChatCompletionChunk) (llm.StreamEvent, error) {
	var ev llm.StreamEvent
	if c.JSON.Usage.Valid() {
		a.usage = chatUsage(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is asked for
		}
		if t := ch.Delta.Content; t != "" {
			a.text.WriteString(t)
			ev.TextDelta += t
		}
		for _, tc := range ch.Delta.ToolCalls {
			call := a.byIndex[tc.Index]
			if call == nil {
				if a.byIndex == nil {
					a.byIndex = map[int64]*callAcc{}
				}
				call = &callAcc{index: tc.Index}
				a.byIndex[tc.Index] = call
				a.calls = append(a.calls, call)
			}
			d := llm.ToolCallDelta{Index: int(tc.Index), ArgumentsDelta: tc.Function.Arguments}
			if tc.ID != "" && call.id == "" {
				call.id, d.ID = tc.ID, tc.ID
			}
			if n := tc.Function.Name; n != "" && call.name == "" {
				call.name, d.Name = n, n
			}
			call.args.WriteString(tc.Function.Arguments)
			ev.ToolCalls = append(ev.ToolCalls, d)
		}
		if ch.FinishReason != "" {
			a.reason, a.finished = ch.FinishReason, true
		}
	}
	return ev, nil
}

func (a *chatAccumulator) response(name string, strip map[string]*nulls) *llm.Response {
	resp := &llm.Response{Text: a.text.String(), Model: name, Usage: a.usage}
	resp.Usage.Requests = 1
	calls := slices.Clone(a.calls)
	slices.SortStableFunc(calls, func(x, y *callAcc) int { return cmp.Compare(x.index, y.index) })
	for _, c := range calls {
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{
			ID: c.id, Name: c.name,
			Arguments: stripNulls(json.RawMessage(c.args.String()), strip[c.name]),
		})
	}
	resp.FinishReason = finishReason(a.reason, len(resp.ToolCalls) > 0)
	return resp
}
