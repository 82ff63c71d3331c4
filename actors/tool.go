package actors

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// onToolRequest serves one weft.node.<node id>.tool.<name> request: it
// hands the call to the host's tool actor.
func (h *Host) onToolRequest(m *nats.Msg) {
	var req ToolRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || m.Reply == "" {
		h.log.Warn("bad tool request", "subject", m.Subject, "err", err)
		return
	}
	h.system.Root.Send(h.tools, &toolCall{req: req, reply: m.Reply})
}

// toolCall is a call the tool actor executes, and where to report.
type toolCall struct {
	req   ToolRequest
	reply string
}

// toolActor executes the calls of the tool host (one actor per host, so
// that a call costs no actor spawn): each call runs through the registry of
// its run in a goroutine the actor starts, which reports on the request's
// reply subject. The goroutines end with their calls; the runs' contexts
// (cancelled by the session actors, and by Host.Close) cancel them.
type toolActor struct {
	h *Host
}

// Receive implements actor.Actor.
func (a *toolActor) Receive(c actor.Context) {
	if call, ok := c.Message().(*toolCall); ok {
		go call.run(a.h)
	}
}

func (a *toolCall) report(h *Host, r ToolReport) {
	r.CallID, r.Tool = a.req.CallID, a.req.Name
	b, ok, err := EncodeReport(h.life, r, h.payload)
	if err != nil || !ok {
		h.log.Warn("tool report not sent", "tool", r.Tool, "call_id", r.CallID, "type", r.Type, "err", err)
		return
	}
	_ = h.cfg.Conn.Publish(a.reply, b)
}

// run executes the call and reports its return.
func (a *toolCall) run(h *Host) {
	v, ok := h.runs.Load(runKey(a.req.SessionID, a.req.RunID))
	if !ok {
		ret := toolsets.Return{CallID: a.req.CallID, ToolName: a.req.Name, Kind: toolsets.KindUserError, IsError: true,
			Content: json.RawMessage(`"this process has no tools prepared for the run"`),
			Control: &toolsets.Control{Message: "this process has no tools prepared for the run"}}
		a.report(h, ToolReport{Type: ReportReturned, Return: &ret})
		return
	}
	e := v.(*runEntry)
	e.mu.RLock()
	reg, meta := e.reg, e.meta
	e.mu.RUnlock()
	if err := ResolveRequest(e.ctx, h.payload.Blobs, &a.req); err != nil {
		ret := ErrorReturn(a.req, "tool "+a.req.Name+": "+err.Error())
		a.report(h, ToolReport{Type: ReportReturned, Return: &ret})
		return
	}
	ExecuteCall(e.ctx, reg, a.req, meta, func(r ToolReport) { a.report(h, r) })
}

// ExecuteCall executes call req through reg and reports on report, as a
// host's tool actor and a remote tool worker do: started / retried reports
// of the attempts after the first (for tools wrapped with ObservedTool),
// progress reports, then one returned report. report is called from the
// calling goroutine and from the tool's emitter. meta is the run's
// metadata shown to the tool (nil for none).
func ExecuteCall(ctx context.Context, reg *toolsets.Registry, req ToolRequest, meta map[string]any, report func(ToolReport)) {
	ctx = context.WithValue(ctx, observerKey{}, observer(report))
	ret := reg.Call(ctx, toolsets.Invocation{
		CallID: req.CallID, Name: req.Name, Arguments: req.Arguments,
		RunID: req.RunID, SessionID: req.SessionID, ConversationID: req.SessionID, Metadata: meta,
		Approval: req.Approval, ModelRetries: req.ModelRetries,
		Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) {
			report(ToolReport{Type: ReportProgress, Attempt: p.Attempt, Progress: &p})
		}),
	})
	report(ToolReport{Type: ReportReturned, Attempt: ret.Attempts, Return: &ret})
}

// ObservedTool wraps t so that ExecuteCall reports the start of each retry
// and each failed attempt the registry will retry. A host wraps the tools
// of its runs so; a worker wraps the tools it serves.
func ObservedTool(t toolsets.Tool) toolsets.Tool { return observed{t} }

// errRunCancelled is the cause a run's context is cancelled with.
var errRunCancelled = errors.New("run cancelled")

// observer receives the started / retried reports of the attempts of a
// call; it travels in the call's context.
type observer func(ToolReport)

type observerKey struct{}

// observed wraps a tool so that each retry reports that its attempt
// started (the scheduler records the first attempt as started when it sends
// the call), and each failed attempt the registry will retry reports that
// it is retried.
type observed struct{ toolsets.Tool }

// Call implements toolsets.Tool.
func (o observed) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	obs, _ := ctx.Value(observerKey{}).(observer)
	if obs != nil && tc.Attempt > 1 {
		obs(ToolReport{Type: ReportStarted, Attempt: tc.Attempt})
	}
	v, err := o.Tool.Call(ctx, tc, args)
	// The registry's own rule: only an execution failure of a live attempt
	// is retried; an error after the attempt's context ended (its timeout,
	// a cancelled run) is a timeout or a cancellation, never retried.
	if obs != nil && tc.WillRetry(ctx, err) {
		obs(ToolReport{Type: ReportRetried, Attempt: tc.Attempt, Error: &events.ErrorInfo{Kind: string(toolsets.KindExecution), Message: err.Error(), Type: toolsets.ErrorType(err)}})
	}
	return v, err
}
