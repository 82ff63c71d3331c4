package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft/toolsets"
)

type wireError = jsonrpc.Error

// progressQueue is how many progress notifications of one call wait to be
// emitted on the tool's goroutine; more are dropped, never blocking the
// connection.
const progressQueue = 256

// progressLinger is how long a call that reported progress waits, after
// its result, for progress notifications still on their way.
const progressLinger = 50 * time.Millisecond

// ProgressName is the name of the tool.progress events of MCP progress
// notifications; their data is a [ProgressData].
const ProgressName = "mcp.progress"

// ProgressData is the data of an MCP progress event.
type ProgressData struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// liveCall sends one tools/call under ctx (the attempt's timeout and the
// run's cancellation; the SDK sends notifications/cancelled when ctx
// ends) and maps the outcome onto weft's kinds:
//
//   - a result: success, or a failed result (kind execution, never
//     retried) when the server set isError;
//   - a JSON-RPC error: invalid params → invalid_arguments, method not
//     found → user_error, any other → execution (a failed result unless
//     the tool may be sent again);
//   - no session to send on: an execution error (the call did not run; the
//     registry may retry it);
//   - the connection lost under the call: for a tool that may be sent again
//     (readOnlyHint or idempotentHint) an execution error the registry
//     retries on a new session, else a failed result that says the call
//     may or may not have run;
//   - ctx ended: its error, which the registry reports as a timeout or a
//     cancellation. A call whose ctx has no deadline gets CallTimeout.
func (ts *Toolset) liveCall(ctx context.Context, t *tool, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	if _, has := ctx.Deadline(); !has {
		d := ts.cfg.callTimeout()
		timeout := &toolsets.TimeoutError{After: d}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, timeout)
		defer cancel()
		res, err := ts.send(ctx, t, tc, args)
		if errors.Is(context.Cause(ctx), timeout) {
			return nil, fmt.Errorf("MCP tool %q: no answer within the toolset's CallTimeout: %w", t.remote, timeout)
		}
		return res, err
	}
	return ts.send(ctx, t, tc, args)
}

// send is liveCall under a deadline.
func (ts *Toolset) send(ctx context.Context, t *tool, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	c := ts.connFor(tc.RunID)
	cs, red, err := c.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("MCP tool %q was not called (it did not run): %w", t.remote, err)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	token := fmt.Sprintf("weft-%d", c.tokens.Add(1))
	prog := make(chan *sdk.ProgressNotificationParams, progressQueue)
	c.progress.Store(token, prog)
	defer c.progress.Delete(token)

	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	params := &sdk.CallToolParams{Name: t.remote, Arguments: args}
	answerInput(params, tc.Elicitation)
	params.SetProgressToken(token)
	callCtx, endSpan := traceCall(ctx, t.remote, params)
	go func() {
		res, err := cs.CallTool(callCtx, params)
		done <- outcome{res, err}
	}()
	var out outcome
	defer func() { endSpan(out.res, out.err) }()
	emitted := 0
	emit := func(p *sdk.ProgressNotificationParams) {
		emitted++
		_ = tc.Emit(ProgressName, ProgressData{Progress: p.Progress, Total: p.Total, Message: red.scrub(p.Message)})
	}
	for waiting := true; waiting; {
		select {
		case p := <-prog:
			emit(p)
		case out = <-done:
			waiting = false
		}
	}
	// The SDK hands notifications over on their own goroutines, so the
	// last ones of a call that reported progress may come just after its
	// result: wait for them a little, bounded.
	linger := time.NewTimer(progressLinger)
	defer linger.Stop()
	for emitted > 0 {
		select {
		case p := <-prog:
			emit(p)
			linger.Reset(progressLinger)
			continue
		case <-linger.C:
		}
		break
	}
	for len(prog) > 0 {
		emit(<-prog)
	}
	if out.err == nil {
		if err := askedInput(t, out.res, red); err != nil {
			return nil, err
		}
		return resultOf(t, out.res, red), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var we *wireError
	if errors.As(out.err, &we) {
		return answerError(t, we, red)
	}
	c.markLost(cs)
	msg := red.scrub(out.err.Error())
	if t.pol.resend {
		return nil, fmt.Errorf("the connection to MCP server %q was lost during the call to %q (the tool is annotated read-only or idempotent, so it may be sent again): %s", t.server, t.remote, msg)
	}
	return uncertain(t, msg), nil
}

// The metadata an elicitation keeps with its request (and gets back with
// the answer): the server's opaque request state and the id of its input
// request.
const (
	metaRequestState = "mcp_request_state"
	metaInputID      = "mcp_input_id"
)

// askedInput turns a server's input request for the call (a multi
// round-trip result asking for an elicitation) into weft's
// ElicitationRequired: the run waits for a person's answer in the HITL
// queue, and the call is sent again with it (answerInput). Other input
// requests (sampling, several at once) are left to resultOf, which fails
// the call saying so.
func askedInput(t *tool, res *sdk.CallToolResult, red *redactor) error {
	if res == nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		return nil
	}
	for id, ir := range res.InputRequests {
		el, ok := ir.(*sdk.ElicitParams)
		if !ok {
			return nil
		}
		var schema json.RawMessage
		if el.RequestedSchema != nil {
			b, err := json.Marshal(el.RequestedSchema)
			if err != nil {
				return nil
			}
			schema = b
		}
		return toolsets.ElicitationRequired(red.scrub(el.Message), schema, map[string]any{
			metaRequestState: res.RequestState, metaInputID: id, MetaServer: t.server, MetaTool: t.remote})
	}
	return nil
}

// answerInput adds a person's answer to a call sent again after it asked
// for input: the input response under the request's id, and the server's
// request state.
func answerInput(params *sdk.CallToolParams, el *toolsets.Elicitation) {
	if el == nil {
		return
	}
	id, _ := el.Request.Metadata[metaInputID].(string)
	if id == "" {
		return
	}
	state, _ := el.Request.Metadata[metaRequestState].(string)
	answer := &sdk.ElicitResult{Action: el.Action}
	if len(el.Content) > 0 {
		_ = json.Unmarshal(el.Content, &answer.Content) // checked against the schema when answered
	}
	params.InputResponses = sdk.InputResponseMap{id: answer}
	params.RequestState = state
}

// uncertain is the failed result of a call whose connection was lost: it
// may or may not have run, and is not sent again.
func uncertain(t *tool, cause string) toolsets.Result {
	text := fmt.Sprintf("The connection to MCP server %q was lost during the call to %q: the call may or may not have run. "+
		"weft did not send it again, because the tool is not annotated readOnlyHint or idempotentHint. Check its effect before calling it again. (%s)",
		t.server, t.remote, cause)
	return toolsets.Result{Content: text, Failed: true, Metadata: map[string]any{MetaServer: t.server, MetaTool: t.remote, "mcp_uncertain": true}}
}

// answerError maps a JSON-RPC error answer of the server.
func answerError(t *tool, we *wireError, red *redactor) (any, error) {
	msg := red.scrub(we.Message)
	switch we.Code {
	case jsonrpc.CodeInvalidParams:
		return nil, toolsets.InvalidArguments("", fmt.Sprintf("MCP server %q refused the arguments of %q: %s", t.server, t.remote, msg),
			"Call the tool again with arguments that match its parameters schema.")
	case jsonrpc.CodeMethodNotFound:
		return nil, toolsets.NewUserError(fmt.Sprintf("MCP server %q does not serve tools/call (%s)", t.server, msg), nil)
	}
	text := fmt.Sprintf("MCP server %q answered the call to %q with error %d: %s", t.server, t.remote, we.Code, msg)
	if t.pol.resend {
		return nil, errors.New(text)
	}
	return toolsets.Result{Content: text, Failed: true, Metadata: map[string]any{MetaServer: t.server, MetaTool: t.remote}}, nil
}

// resultOf maps a tools/call result: the structured content when there is
// one, else the text of the content blocks (one string), else the blocks
// as MCP JSON. isError makes it a failed result.
func resultOf(t *tool, res *sdk.CallToolResult, red *redactor) toolsets.Result {
	meta := map[string]any{MetaServer: t.server, MetaTool: t.remote}
	if res.NeedsInput() {
		var asked []string
		for id, ir := range res.InputRequests {
			asked = append(asked, fmt.Sprintf("%s (%T)", id, ir))
		}
		slices.Sort(asked)
		return toolsets.Result{Metadata: meta, Failed: true, Content: fmt.Sprintf(
			"MCP server %q asked for input during the call to %q (%s); weft does not answer MCP input requests (elicitation, sampling) yet, so the call did not complete.",
			t.server, t.remote, strings.Join(asked, ", "))}
	}
	out := toolsets.Result{Metadata: meta, Failed: res.IsError}
	if res.StructuredContent != nil && !res.IsError {
		out.Content = res.StructuredContent
		return out
	}
	var texts []string
	allText := true
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		} else {
			allText = false
		}
	}
	switch {
	case allText:
		s := strings.Join(texts, "\n")
		if res.IsError {
			s = red.scrub(s)
		}
		out.Content = s
	default:
		blocks := make([]json.RawMessage, 0, len(res.Content))
		for _, c := range res.Content {
			b, err := json.Marshal(c)
			if err != nil {
				continue
			}
			blocks = append(blocks, b)
		}
		out.Content = blocks
	}
	return out
}
