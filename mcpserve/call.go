package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// callInput is what a call's run is started with: its prompt, recorded in
// run.started as the run's input.
type callInput struct {
	Tool      string          `json:"tool"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"`
}

// callModel drives a call's run: asked with the run's prompt (a
// callInput), it asks for exactly that call; asked again (the call has
// returned, or the model is asked to correct it), it ends the run.
type callModel struct{}

// ModelName names the MCP client as the run's model in the log.
func (callModel) ModelName() string { return "mcp:client" }

func (callModel) Request(_ context.Context, req *llm.Request) (*llm.Response, error) {
	last, ok := req.LastMessage()
	if !ok || len(last.Parts) == 0 {
		return nil, &llm.ModelError{Provider: "mcp", Model: "client", Err: errors.New("a call's run has no prompt")}
	}
	if p, ok := last.Parts[0].(llm.UserPrompt); ok && len(req.Messages) == 1 {
		var in callInput
		if err := json.Unmarshal([]byte(p.Text), &in); err != nil {
			return nil, &llm.ModelError{Provider: "mcp", Model: "client", Err: fmt.Errorf("the run's prompt is not an MCP call: %w", err)}
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: in.CallID, Name: in.Tool, Arguments: in.Arguments}},
			Model: "mcp:client", FinishReason: llm.FinishToolCalls, Usage: llm.Usage{Requests: 1}}, nil
	}
	return &llm.Response{Text: "returned", Model: "mcp:client", FinishReason: llm.FinishStop, Usage: llm.Usage{Requests: 1}}, nil
}

// callKey names a call a client may send again: its MCP session, tool and
// arguments (compacted).
type callKey struct {
	client, tool, args string
}

// waitingCall is a call whose run waits for a decision.
type waitingCall struct {
	session, run, call string
}

// handle answers one tools/call.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.Params.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return errorResult(fmt.Sprintf("the arguments are not JSON: %v", err), nil), nil
	}
	key := callKey{client: req.Session.ID(), tool: req.Params.Name, args: compact.String()}
	s.mu.Lock()
	w, waiting := s.pending[key]
	s.mu.Unlock()
	if waiting {
		return s.again(ctx, key, w)
	}
	sess := s.agent.NewSession()
	in := callInput{Tool: key.tool, CallID: "call_" + uuid.Must(uuid.NewV7()).String(), Arguments: compact.Bytes()}
	prompt, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	res, err := sess.Run(ctx, string(prompt))
	return s.answer(ctx, key, sess, in.CallID, res, err)
}

// again answers a call sent again while its run waited for a decision.
func (s *Server) again(ctx context.Context, key callKey, w waitingCall) (*mcp.CallToolResult, error) {
	sess := s.agent.Session(w.session)
	st, err := sess.Status(ctx)
	if err != nil {
		return nil, err
	}
	r, ok := st.Run(w.run)
	if !ok {
		return nil, fmt.Errorf("mcpserve: run %q of session %q is gone", w.run, w.session)
	}
	if r.Status == weft.StatusRunning {
		res, err := sess.Wait(ctx, w.run)
		return s.answer(ctx, key, sess, w.call, res, err)
	}
	return s.answer(ctx, key, sess, w.call, &weft.Result{SessionID: w.session, RunID: w.run, Status: r.Status, Pending: r.Pending, Err: r.Err}, nil)
}

// answer turns a call's settled run into the call's result: pending while
// it waits for a decision (and remembered, so that the same call sent
// again gets its outcome), else the tool's return.
func (s *Server) answer(ctx context.Context, key callKey, sess *weft.Session, callID string, res *weft.Result, err error) (*mcp.CallToolResult, error) {
	var re *weft.RunError
	if err != nil && !errors.As(err, &re) {
		return nil, err
	}
	if res.Status == weft.StatusWaiting {
		s.mu.Lock()
		s.pending[key] = waitingCall{session: sess.ID(), run: res.RunID, call: callID}
		s.mu.Unlock()
		status, what := "approval_pending", "an approval"
		if len(res.Pending.Approvals) == 0 {
			status, what = "deferred_pending", "an external result (a deferred call)"
		}
		return errorResult(fmt.Sprintf("the call of %s waits for %s in weft session %s (call %s); call it again with the same arguments once it is decided",
			key.tool, what, sess.ID(), callID), map[string]any{"status": status, "session_id": sess.ID(), "run_id": res.RunID, "call_id": callID}), nil
	}
	s.mu.Lock()
	delete(s.pending, key)
	s.mu.Unlock()
	ret, found, rerr := returnOf(ctx, sess, res.RunID, callID)
	switch {
	case rerr != nil:
		return nil, rerr
	case found:
		return returnResult(ret), nil
	case res.Err != nil:
		return errorResult(fmt.Sprintf("the call did not return: %s", res.Err.Error()), nil), nil
	}
	return errorResult(fmt.Sprintf("the call did not return: its run ended %s", res.Status), nil), nil
}

// returnOf reads the recorded return of call callID of run runID: the
// last one (a gated call first returns approval_required, then, approved,
// the tool's own return).
func returnOf(ctx context.Context, sess *weft.Session, runID, callID string) (toolsets.Return, bool, error) {
	evs, err := sess.Events(ctx, runID)
	if err != nil {
		return toolsets.Return{}, false, err
	}
	var last *events.Event
	for i := range evs {
		if evs[i].Type == events.TypeToolReturned && evs[i].ToolCallID == callID {
			last = &evs[i]
		}
	}
	if last == nil {
		return toolsets.Return{}, false, nil
	}
	data, err := events.Decode(*last)
	if err != nil {
		return toolsets.Return{}, false, err
	}
	var ret toolsets.Return
	if err := json.Unmarshal(data.(events.ToolReturned).Return, &ret); err != nil {
		return toolsets.Return{}, false, fmt.Errorf("mcpserve: the return of %s: %w", callID, err)
	}
	return ret, true, nil
}

// returnResult is the MCP result of a tool return: its model-facing
// content only, an error unless the tool ran and succeeded (a denial is
// not an error to weft's model, but the call did not run).
func returnResult(ret toolsets.Return) *mcp.CallToolResult {
	content := ret.Content
	if len(ret.ModelOverride) > 0 {
		content = ret.ModelOverride
	}
	out := &mcp.CallToolResult{IsError: ret.IsError || !ret.Success}
	var text string
	if err := json.Unmarshal(content, &text); err != nil {
		text = string(content)
		if bytes.HasPrefix(bytes.TrimSpace(content), []byte("{")) {
			out.StructuredContent = content
		}
	}
	out.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return out
}

// errorResult is an error result saying why, with structured details.
func errorResult(text string, details map[string]any) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	if details != nil {
		out.StructuredContent = details
	}
	return out
}
