package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/toolsets"
)

// The agent's tool hooks (AgentSpec.ToolHooks) around remote calls. A
// local call runs them in the run's registry; a remote call's tool runs on
// a worker, which runs the tool's and toolset's hooks, so the scheduler
// runs the agent's here, in the session's process: the Before hooks before
// the call is sent (a rewrite is what is sent; a refusal returns the call
// without sending it), the After hooks on the worker's return. Hooks run
// in goroutines, never in Receive; their records come first (before) and
// last (after) in the return's Hooks, around the worker's.

// remoteBefore is the outcome of the Before hooks of a remote call.
type remoteBefore struct {
	call ToolRequest
	recs []toolsets.HookRecord
	err  error
}

// remoteAfter is a remote call's return after the agent's After hooks.
type remoteAfter struct{ report ToolReport }

// agentHooks returns the agent hooks of call's run and its run entry.
func (a *schedulerActor) agentHooks(call ToolRequest) ([]toolsets.Hook, *runEntry) {
	e, ok := a.h.runEntry(call.SessionID, call.RunID)
	if !ok {
		return nil, nil
	}
	return e.hooks, e
}

func hookCall(call ToolRequest, e *runEntry) toolsets.HookCall {
	e.mu.RLock()
	meta := e.meta
	e.mu.RUnlock()
	args := call.Arguments
	if call.Approval != nil && call.Approval.Arguments != nil {
		args = call.Approval.Arguments
	}
	return toolsets.HookCall{CallID: call.CallID, ToolName: call.Name, RunID: call.RunID, SessionID: call.SessionID, Arguments: args, Metadata: meta}
}

// beforeRemote runs the agent's Before hooks of remote call in a
// goroutine; it reports with remoteBefore. It reports false when there
// are none to run.
func (a *schedulerActor) beforeRemote(c actor.Context, call ToolRequest) bool {
	if a.hooked[call.CallID] {
		return false
	}
	hooks, e := a.agentHooks(call)
	if len(hooks) == 0 {
		return false
	}
	self, root := c.Self(), a.h.system.Root
	go func() {
		hc := hookCall(call, e)
		args, recs, err := toolsets.RunBefore(e.ctx, hooks, toolsets.LevelAgent, hc, nil)
		if err == nil {
			if call.Approval != nil && call.Approval.Arguments != nil {
				ap := *call.Approval
				ap.Arguments = args
				call.Approval = &ap
			} else {
				call.Arguments = args
			}
		}
		root.Send(self, &remoteBefore{call: call, recs: recs, err: err})
	}()
	return true
}

// onRemoteBefore sends a remote call its Before hooks let through, or
// returns the one they refused.
func (a *schedulerActor) onRemoteBefore(c actor.Context, m *remoteBefore) {
	if a.hooked == nil {
		a.hooked = map[string]bool{}
	}
	a.hooked[m.call.CallID] = true
	if len(m.recs) > 0 {
		if a.beforeRecs == nil {
			a.beforeRecs = map[string][]toolsets.HookRecord{}
		}
		a.beforeRecs[m.call.CallID] = m.recs
	}
	c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: ToolReport{Type: ReportStarted, CallID: m.call.CallID, Tool: m.call.Name, Attempt: 1}})
	if m.err != nil {
		ret := toolsets.RefusalReturn(m.call.CallID, m.call.Name, m.err)
		ret.Hooks = m.recs
		a.onReport(c, &ToolReport{Type: ReportReturned, CallID: m.call.CallID, Tool: m.call.Name, Return: &ret})
		return
	}
	if err := a.sendRemote(c, m.call); err != nil {
		a.open--
		a.fail(c, m.call, "send tool call: "+err.Error())
		if a.batch.sequential && a.next < len(a.batch.calls) {
			a.send(c)
		}
	}
}

// afterRemote runs the agent's After hooks on the return of remote call
// rc in a goroutine, which reports with remoteAfter; it reports false when
// there are none to run (the return goes on as it is).
func (a *schedulerActor) afterRemote(c actor.Context, rc *remoteCall, m *ToolReport) bool {
	if rc == nil || m.Return == nil || a.afterDone[m.CallID] {
		return false
	}
	hooks, e := a.agentHooks(rc.req)
	if len(hooks) == 0 {
		return false
	}
	if rc.resolving {
		return true // the hooks run on this call's return already
	}
	rc.resolving = true // the call has returned: it is not sent again
	self, root, report, before := c.Self(), a.h.system.Root, *m, a.beforeRecs[m.CallID]
	go func() {
		ret := *report.Return
		ret.Hooks = append(append([]toolsets.HookRecord(nil), before...), ret.Hooks...)
		ctx := e.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		ret = toolsets.RunAfter(ctx, hooks, toolsets.LevelAgent, hookCall(rc.req, e), ret)
		report.Return = &ret
		root.Send(self, &remoteAfter{report: report})
	}()
	return true
}

// onRemoteAfter hands on a remote return its After hooks have seen.
func (a *schedulerActor) onRemoteAfter(c actor.Context, m *remoteAfter) {
	if a.afterDone == nil {
		a.afterDone = map[string]bool{}
	}
	a.afterDone[m.report.CallID] = true
	if rc := a.remote[m.report.CallID]; rc != nil {
		rc.resolving = false
	}
	a.onReport(c, &m.report)
}
