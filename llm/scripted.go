package llm

import (
	"context"
	"fmt"
	"sync"
)

// ScriptedName is the model name a Scripted model reports when a scripted
// response does not name one.
const ScriptedName = "scripted"

// Scripted is a test model that answers from a script: the i-th request
// gets the i-th response (NewScripted), or every request gets the same one
// (AlwaysText). It records every request it receives, whatever the
// outcome, as a deep copy (see Requests). It is safe for concurrent use;
// concurrent requests take responses in the order they acquire the model.
//
// Each answer is a copy of the scripted response with defaults filled in
// where the script left them zero: Model is ScriptedName, FinishReason is
// FinishToolCalls when there are tool calls and FinishStop otherwise, and
// Usage is EstimateUsage(req, resp) — deterministic figures derived from
// byte lengths.
//
// When the script is used up, Request returns a *ModelError that matches
// ErrNoResponses. A request whose context is already done gets a
// *ModelError wrapping ctx.Err() and consumes no response.
type Scripted struct {
	mu       sync.Mutex
	script   []Response
	next     int
	always   bool // answer every request with script[0]
	requests []*Request
}

var _ Model = (*Scripted)(nil)

// NewScripted returns a model that answers the i-th request with
// responses[i] and then fails with ErrNoResponses. It mirrors the seeds'
// TestModel.responses([...]). The responses are copied.
func NewScripted(responses ...Response) *Scripted {
	s := &Scripted{script: make([]Response, len(responses))}
	for i := range responses {
		s.script[i] = *responses[i].Clone()
	}
	return s
}

// AlwaysText returns a model that answers every request with text and
// never runs out. It mirrors the seeds' TestModel.text("ready").
func AlwaysText(text string) *Scripted {
	return &Scripted{script: []Response{ScriptText(text)}, always: true}
}

// ScriptText returns a scripted response holding only text. It mirrors the
// seeds' {"text": "done"}.
func ScriptText(text string) Response { return Response{Text: text} }

// ScriptToolCalls returns a scripted response asking for calls, in order.
// It mirrors the seeds' TestModel.tool_call_response([...]). The calls are
// copied.
func ScriptToolCalls(calls ...ToolCall) Response {
	r := Response{ToolCalls: make([]ToolCall, len(calls))}
	for i, c := range calls {
		r.ToolCalls[i] = c.Clone()
	}
	return r
}

// Request answers req from the script. See Scripted for the rules.
func (s *Scripted) Request(ctx context.Context, req *Request) (*Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req.Clone())
	if req == nil {
		return nil, &ModelError{Model: ScriptedName, Err: ErrNilRequest}
	}
	if err := ctx.Err(); err != nil {
		return nil, &ModelError{Model: ScriptedName, Err: err}
	}
	var resp *Response
	switch {
	case s.always:
		resp = s.script[0].Clone()
	case s.next < len(s.script):
		resp = s.script[s.next].Clone()
		s.next++
	default:
		return nil, &ModelError{Model: ScriptedName, Err: fmt.Errorf("request %d, script of %d: %w", len(s.requests), len(s.script), ErrNoResponses)}
	}
	fillDefaults(req, resp, ScriptedName)
	return resp, nil
}

// Requests returns deep copies of the requests received so far, in order.
// An entry is nil where Request was called with a nil *Request.
func (s *Scripted) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.Clone()
	}
	return out
}

// Remaining returns how many scripted responses are left; -1 for a model
// made by AlwaysText, which never runs out.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.always {
		return -1
	}
	return len(s.script) - s.next
}

// fillDefaults fills the zero fields of resp as documented on Scripted.
func fillDefaults(req *Request, resp *Response, name string) {
	if resp.Model == "" {
		resp.Model = name
	}
	if resp.FinishReason == "" {
		resp.FinishReason = FinishStop
		if len(resp.ToolCalls) > 0 {
			resp.FinishReason = FinishToolCalls
		}
	}
	if resp.Usage == (Usage{}) {
		resp.Usage = EstimateUsage(req, resp)
	}
}

// ModelName returns ScriptedName, the name its responses carry.
func (s *Scripted) ModelName() string { return ScriptedName }
