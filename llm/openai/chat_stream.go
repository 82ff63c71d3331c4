package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/weft-run/weft/llm"
)

// chatStream sends req to Chat Completions as a stream (with the usage
// chunk requested) and yields its deltas, then the complete Response.
//
// The SDK builds and sends the request and splits the body into SSE
// events; the chunks are decoded here into the few fields the adapter
// reads (wireChunk), which costs a fraction of the SDK's reflective
// decoding of every chunk into its full type (see BenchmarkStream2000).
func (m *Model) chatStream(ctx context.Context, req *llm.Request, yield func(llm.StreamEvent, error) bool) {
	p, strip, err := m.chatParams(req, true)
	if err != nil {
		yield(llm.StreamEvent{}, m.fail(err))
		return
	}
	var raw *http.Response
	_, err = m.chat.New(ctx, p, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	if raw != nil && raw.Body != nil {
		defer raw.Body.Close()
	}
	if err != nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
		return
	}
	if isJSON(raw.Header.Get("Content-Type")) {
		// A server that ignores "stream": one answer, yielded as one event.
		m.chatStreamedWhole(ctx, req, raw, strip, yield)
		return
	}
	dec := ssestream.NewDecoder(raw)
	if dec == nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, wrapMalformed(errorf("no body"))))
		return
	}
	defer dec.Close()
	var acc chatAccumulator
	for dec.Next() {
		data := dec.Event().Data
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			break
		}
		var c wireChunk
		if err := json.Unmarshal(data, &c); err != nil {
			yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, wrapMalformed(err)))
			return
		}
		if c.Error != nil {
			yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, c.Error.failure()))
			return
		}
		ev := acc.add(&c)
		if ev.TextDelta == "" && len(ev.ToolCalls) == 0 {
			continue
		}
		if !yield(ev, nil) {
			return
		}
	}
	if err := dec.Err(); err != nil {
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

// wireChunk is what the adapter reads of a chat.completion.chunk, or of an
// error event ({"error": {...}}) in its place.
type wireChunk struct {
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens     int64 `json:"cached_tokens"`
			CacheWriteTokens int64 `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *wireError `json:"error"`
}

// wireError is an error object in a stream; its code may be a string, a
// number or null.
type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

func (e *wireError) failure() *streamFailure {
	f := &streamFailure{typ: e.Type, msg: e.Message}
	if e.Code != nil {
		f.code = strings.Trim(string(mustJSON(e.Code)), `"`)
	}
	return f
}

// chatAccumulator builds the Response of a Chat Completions stream from
// its chunks.
type chatAccumulator struct {
	text     strings.Builder
	refusal  strings.Builder
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
func (a *chatAccumulator) add(c *wireChunk) llm.StreamEvent {
	var ev llm.StreamEvent
	if u := c.Usage; u != nil {
		a.usage = llm.Usage{
			InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
			CacheReadTokens: u.PromptTokensDetails.CachedTokens, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only the first choice is asked for
		}
		if t := ch.Delta.Content; t != "" {
			a.text.WriteString(t)
			ev.TextDelta += t
		}
		if t := ch.Delta.Refusal; t != "" {
			a.refusal.WriteString(t)
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
	return ev
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
	if resp.Text == "" && a.refusal.Len() > 0 {
		resp.Text = a.refusal.String()
		resp.FinishReason = llm.FinishContentFilter
	}
	return resp
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// chatStreamedWhole yields a whole Chat Completions answer that came to a
// streamed request as one event: all its text, every call as one
// fragment, and the Response.
func (m *Model) chatStreamedWhole(ctx context.Context, req *llm.Request, raw *http.Response, strip map[string]*nulls, yield func(llm.StreamEvent, error) bool) {
	var cc openai.ChatCompletion
	body, err := io.ReadAll(raw.Body)
	if err != nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
		return
	}
	if err := json.Unmarshal(body, &cc); err != nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, wrapMalformed(err)))
		return
	}
	resp, err := m.chatResponse(&cc, strip)
	if err != nil {
		yield(llm.StreamEvent{}, m.failRequest(ctx, req, raw, err))
		return
	}
	ev := llm.StreamEvent{TextDelta: resp.Text, Response: resp}
	for i, c := range resp.ToolCalls {
		ev.ToolCalls = append(ev.ToolCalls, llm.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: string(c.Arguments)})
	}
	yield(ev, nil)
}
