package actors

import (
	"encoding/json"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/toolsets"
)

// Local tools run in this process, which prepared their run: a call is a
// goroutine that executes it through the run's registry (Host.runs) and
// hands its reports, as Go values, to whoever dispatched it — the session
// actor for a batch of local calls only, the batch's scheduler actor for
// a batch that also has remote calls. Nothing of a local call crosses NATS.

// batchRunner is a batch under way: a scheduler actor, or the goroutines
// of a batch of local calls.
type batchRunner interface {
	// stop ends the batch's work that the run's context does not end:
	// the scheduler's watch of its remote calls (their cancels unless the
	// batch is handed over). Local calls end with the run's context.
	stop()
}

// startBatch starts batch b of session pid: in goroutines when all its
// calls are local, in a scheduler actor (a child of the session) when any
// of them goes to remote workers.
func (h *Host) startBatch(c actor.Context, a *sessionActor, b *scheduleBatch) batchRunner {
	for _, call := range b.calls {
		if h.IsRemoteTool(call.Name) {
			return schedulerRunner{h: h, pid: c.Spawn(actor.PropsFromProducer(func() actor.Actor { return &schedulerActor{h: h, batch: b} }, h.props...))}
		}
	}
	lb := &localBatch{h: h, session: a.ref(), batch: b}
	lb.start(a.start)
	return lb
}

// schedulerRunner is a batch run by a scheduler actor.
type schedulerRunner struct {
	h   *Host
	pid *actor.PID
}

func (s schedulerRunner) stop() { s.h.system.Root.Stop(s.pid) }

// localBatch runs a batch of local calls: all at once, or one after
// another in model order when the batch is sequential. Each call's first
// attempt is reported started as it is sent; the call's goroutine
// reports the rest; the last call to return tells the session that the
// batch finished, after its own return.
type localBatch struct {
	h       *Host
	session sessionRef // each report is carried to it (see carried)
	batch   *scheduleBatch
	open    atomic.Int32
}

func (lb *localBatch) stop() {}

// start starts the batch's calls as tasks of the session (with start):
// one for a sequential batch, one per call otherwise; the task that ends
// the batch ends with batchFinished.
func (lb *localBatch) start(start func(task)) {
	calls := lb.batch.calls
	finished := &batchFinished{runID: lb.batch.runID}
	if lb.batch.sequential {
		start(func(r *runner) carried {
			for _, call := range calls {
				lb.started(call, r.deliver)
				lb.h.executeLocal(call, lb.to(r.deliver))
			}
			return finished
		})
		return
	}
	lb.open.Store(int32(len(calls)))
	for _, call := range calls {
		lb.started(call, lb.carry)
		start(func(r *runner) carried {
			lb.h.executeLocal(call, lb.to(r.deliver))
			if lb.open.Add(-1) == 0 {
				return finished
			}
			return nil
		})
	}
}

func (lb *localBatch) started(call ToolRequest, deliver func(carried)) {
	lb.to(deliver)(ToolReport{Type: ReportStarted, CallID: call.CallID, Tool: call.Name, Attempt: 1})
}

// to returns the function that hands a report of the batch to the
// session with deliver.
func (lb *localBatch) to(deliver func(carried)) func(ToolReport) {
	return func(r ToolReport) { deliver(&toolMsg{runID: lb.batch.runID, report: r}) }
}

// carry carries msg to the session (from the session actor itself, it
// only queues it: the actor reads it next).
func (lb *localBatch) carry(msg carried) { lb.h.carry(lb.session, msg) }

// executeLocal executes call req of a local tool through the registry of
// its run and hands each report to deliver, the returned one last.
func (h *Host) executeLocal(req ToolRequest, deliver func(ToolReport)) {
	report := func(r ToolReport) {
		r.CallID, r.Tool = req.CallID, req.Name
		deliver(r)
	}
	e, ok := h.runEntry(req.SessionID, req.RunID)
	if !ok {
		const msg = "this process has no tools prepared for the run"
		content, _ := json.Marshal(msg)
		ret := toolsets.Return{CallID: req.CallID, ToolName: req.Name, Kind: toolsets.KindUserError, IsError: true,
			Content: content, Control: &toolsets.Control{Message: msg}}
		report(ToolReport{Type: ReportReturned, Return: &ret})
		return
	}
	e.mu.RLock()
	reg, meta := e.reg, e.meta
	e.mu.RUnlock()
	ctx := e.ctx
	if o := h.cfg.Observer; o != nil {
		ctx = o.ToolContext(ctx, req)
	}
	ExecuteCall(ctx, reg, req, meta, report)
}

// BatchCall is one call of a run's current response: its id and the name
// the model (or a program) called its tool by.
type BatchCall struct{ ID, Tool string }

// batchCalls is what the tool host keeps of batch for RunBatch.
func batchCalls(batch []*CallState) []BatchCall {
	out := make([]BatchCall, len(batch))
	for i, c := range batch {
		out[i] = BatchCall{ID: c.ID, Tool: c.Tool}
	}
	return out
}

// RunRegistry returns the registry the local calls of run of session
// execute through in this process — that of the run's current step, which
// resolves the names the model called — and whether this process has one
// for the run (it has while the run's local calls can execute here). A
// tool that must know what the other calls of its batch are (weft's agent
// tools, for their fan-out limit) looks their names up in it.
func (h *Host) RunRegistry(session, run string) (*toolsets.Registry, bool) {
	e, ok := h.runEntry(session, run)
	if !ok {
		return nil, false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.reg, e.reg != nil
}

// RunBatch returns the calls of the current response of run of session,
// in model order, as they were when this process last dispatched the
// run's calls (nil when it has dispatched none): a call running here is in
// the batch that dispatched it, a program's call (code mode) too, since it
// is recorded in the run's batch before it is dispatched. A call this
// process did not dispatch is not in it; the run's session has every call.
func (h *Host) RunBatch(session, run string) ([]BatchCall, bool) {
	e, ok := h.runEntry(session, run)
	if !ok {
		return nil, false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.batch, e.batch != nil
}

func (h *Host) runEntry(session, run string) (*runEntry, bool) {
	v, ok := h.runs.Load(runKey(session, run))
	if !ok {
		return nil, false
	}
	return v.(*runEntry), true
}
