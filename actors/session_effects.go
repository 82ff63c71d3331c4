package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// The session actor's effects: what it does for the core's decisions.

// reply answers cmd (nil: none) with e: its run and the session's version,
// or e.err as a *CommandError (an append's error mapped to one).
func (a *sessionActor) reply(cmd *command, e effReply) {
	if cmd == nil {
		return
	}
	if e.err == nil {
		cmd.answer(CommandReply{RunID: e.runID, Version: a.st.Version})
		return
	}
	err := e.err
	var ce *CommandError
	switch {
	case errors.As(err, &ce):
	case errors.Is(err, ErrSessionOwned):
		ce = commandError(cmd.verb, a.id, ErrSessionOwned, "%v", err)
	case errors.Is(err, ErrUnavailable):
		ce = commandError(cmd.verb, a.id, ErrUnavailable, "%v", err)
	case errors.Is(err, events.ErrPayloadTooLarge):
		ce = commandError(cmd.verb, a.id, ErrBadCommand, "%v", err)
	default:
		ce = commandError(cmd.verb, a.id, ErrInternal, "%v", err)
	}
	ce.Verb, ce.SessionID = cmd.verb, a.id
	cmd.answer(CommandReply{Error: ce})
}

// prepare prepares the tools of run e.run for step e.step: through the
// lifecycle actor, or in place for a run with loose tools only.
func (a *sessionActor) prepare(c actor.Context, e effPrepare) {
	m := a.run
	if m == nil || m.id != e.run {
		r := a.st.Run(e.run)
		if r == nil {
			return
		}
		var err error
		if m, err = a.mem(r); err != nil {
			a.h.log.Error("prepare", "session", a.id, "run", e.run, "err", err)
			return
		}
	}
	if m.f.preparing {
		return
	}
	tc := a.toolsetContext(m, e.step)
	m.f = m.f.performed(e)
	if len(m.lcs) == 0 {
		// Loose tools only: no toolset's Prepare can block, so the
		// inventory is built here rather than by the lifecycle actor.
		prep, reps, err := a.h.prepareRun(context.Background(), m.spec, nil, &tc)
		a.onPrepared(c, &preparedReply{runID: m.id, prep: prep, reports: reps, err: err})
	} else {
		m.prepared = true
		if a.life == nil {
			// The lifecycle actor is spawned for the first run with
			// toolsets: a session of loose tools never needs it.
			a.life = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return &lifecycleActor{h: a.h} }, a.h.props...))
		}
		c.Request(a.life, &prepareRequest{spec: m.spec, lcs: m.lcs, tc: tc})
	}
	if e.forBatch {
		m.f.forBatch = true
	}
}

// callModel runs model request req as a task (through its stream when
// the model streams, see askModel), which validates a final output and
// reports back with a modelReply.
func (a *sessionActor) callModel(req *llm.Request) {
	m := a.run
	if m == nil || m.id != req.Run.RunID {
		return
	}
	m.f = m.f.performed(effCallModel{req: req})
	run, step, ctx, model, validators, session, spec := req.Run.RunID, req.Run.Step, m.entry.ctx, m.spec.Model, m.spec.OutputValidators, a.id, m.spec
	a.start(func(*runner) carried {
		req, amended, herr := runRequestHooks(ctx, spec.RequestHooks, req)
		if herr != nil {
			return &modelReply{runID: run, step: step, capability: herr.Error()}
		}
		resp, err := a.h.askModel(ctx, model, session, req)
		var rejected, capability string
		if err == nil && resp != nil && len(resp.ToolCalls) == 0 {
			rejected = validateOutput(ctx, validators, resp.Text)
			if rejected == "" {
				if herr := runCompleteHooks(ctx, spec.RunCompleteHooks, RunCompletion{Agent: spec.Name, SessionID: session, RunID: run, Output: resp.Text}); herr != nil {
					capability = herr.Error()
				}
			}
		}
		return &modelReply{runID: run, step: step, resp: resp, err: err, rejected: rejected, capability: capability, amended: amended}
	})
}

// dispatch runs batch e (see startBatch): local calls in goroutines of
// this process, a batch with remote calls in a scheduler actor, a child of
// the session's; either reports each call (toolMsg), then batchFinished.
func (a *sessionActor) dispatch(c actor.Context, e effDispatch) {
	m := a.run
	if m == nil || m.id != e.run {
		return
	}
	m.f = m.f.performed(e)
	m.entry.mu.Lock()
	m.entry.batch = e.batch
	m.entry.mu.Unlock()
	b := &scheduleBatch{runID: e.run, calls: e.calls, sequential: e.sequential}
	m.scheduler, m.batch = a.h.startBatch(c, a, b), b
}

// releaseHeld handles the resumes held for a preparation, in the order
// they came.
func (a *sessionActor) releaseHeld(c actor.Context) {
	held := a.held
	a.held = nil
	for _, cmd := range held {
		a.onCommand(c, cmd)
	}
}

// refuseHeld answers the held resumes of a stopping actor: unavailable,
// nothing recorded; the caller retries.
func (a *sessionActor) refuseHeld() {
	for _, cmd := range a.held {
		cmd.answer(CommandReply{Error: commandError(cmd.verb, a.id, ErrUnavailable, "the session stopped while its tools were prepared; retry")})
	}
	a.held = nil
}

// endRun forgets the in-memory part of the active run and cancels whatever
// it still has running on this node. Its remote calls are cancelled only
// when the run ended (cause errRunCancelled); when this node stops driving
// the session, the node that carries the run on delivers them again.
func (a *sessionActor) endRun(cause error) {
	m := a.run
	if m == nil {
		return
	}
	a.run = nil
	if m.scheduler != nil {
		if !errors.Is(cause, errRunCancelled) {
			m.batch.handOver.Store(true)
		}
		m.scheduler.stop()
	}
	if m.entry != nil {
		m.entry.cancel(cause)
		a.h.runs.Delete(runKey(a.id, m.id))
	}
}

// mem returns the in-memory part of run r, creating it.
func (a *sessionActor) mem(r *RunState) (*runMem, error) {
	if a.run != nil && a.run.id == r.ID && a.run.spec.Name == r.Agent {
		return a.run, nil
	}
	a.exitHandedOff(r)
	a.endRun(errRunCancelled)
	spec, ok := a.h.AgentVersion(r.Agent, runVersion(r))
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, r.Agent)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &runMem{id: r.ID, spec: spec, entry: &runEntry{ctx: ctx, cancel: cancel, meta: r.Metadata, hooks: spec.ToolHooks}, meta: r.Metadata}
	m.lcs = append(slices.Clip(spec.lifecycles), a.h.runLifecycles(r.ID, spec.PrepareTimeout)...)
	m.f = runFacts{run: r.ID, spec: spec, toolsets: len(m.lcs) > 0, prepStep: -1, inFlight: map[string]bool{}}
	a.restoreSearch(m)
	a.run = m
	return m, nil
}

// toolsetContext is the read-only view of run m's step the toolsets are
// prepared (and exited) with.
func (a *sessionActor) toolsetContext(m *runMem, step int) toolsets.ToolsetContext {
	return toolsets.ToolsetContext{AgentID: m.spec.Name, RunID: m.id, SessionID: a.id, ConversationID: a.id, RunStep: step,
		Metadata: m.meta, WorkspaceRoot: m.spec.WorkspaceRoot, Environment: m.spec.Environment, Resources: m.spec.Resources}
}
