package weft

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
)

// subruns delivers the ends of sub-runs (AgentTool) to their parents and
// cancels the children of ended parents. Delivery is idempotent and comes
// three ways: push (a child's end, heard on the node that settles it),
// pull (a parent that starts waiting looks at its children: they may have
// ended first) and a scan at Recover (what a dead process did not
// deliver). Nothing waits in memory for a child.
type subruns struct {
	rt *Runtime
}

// subs returns the runtime's sub-run deliverer, listening from the first
// call on.
func (rt *Runtime) subs() *subruns {
	rt.subOnce.Do(func() {
		s := &subruns{rt: rt}
		rt.host.OnSettled(s.settled)
		rt.sub.Store(s)
	})
	return rt.sub.Load()
}

// settled hears every outcome the host tells: it must not block.
func (s *subruns) settled(o actors.Outcome) {
	host := s.rt.host
	if p, ok := actors.ParentOf(o.Metadata); ok && o.Status.Ended() {
		host.Go(func(ctx context.Context) { s.settleParent(ctx, p.SessionID, p.RunID) })
	}
	if o.Status == actors.StatusWaiting && hasSubrun(o.Pending) {
		host.Go(func(ctx context.Context) { s.settleParent(ctx, o.SessionID, o.RunID) })
	}
	if o.Status == actors.StatusCancelled || o.Status == actors.StatusFailed {
		host.Go(func(ctx context.Context) { s.cancelChildren(ctx, o.SessionID, o.RunID, string(o.Status)) })
	}
}

// subrunOf reads the child a pending item or return waits for
// (MetaSubrun).
func subrunOf(md map[string]any) (actors.SubrunRef, bool) {
	r := actors.SubrunFrom(md[MetaSubrun])
	return r, r.SessionID != "" && r.RunID != ""
}

func hasSubrun(items []actors.PendingItem) bool {
	for _, it := range items {
		if _, ok := subrunOf(it.Metadata); ok {
			return true
		}
	}
	return false
}

// settleParent resumes parent run run of session with the ends of its
// children once all the sub-runs it waits for have ended. It does nothing
// when the run is not waiting, waits for an item that is not a sub-run
// (a person decides that resume), or has a child still going; a resume
// another delivery made first is refused and ignored.
func (s *subruns) settleParent(ctx context.Context, session, run string) {
	host := s.rt.host
	st, err := host.ReadSession(ctx, session)
	if err != nil {
		s.warn(ctx, "deliver the end of sub-runs: read the parent session", "session", session, "run", run, "err", err)
		return
	}
	r := st.Runs[run]
	if r == nil || r.Status != actors.StatusWaiting {
		return
	}
	ds, all := s.endedDecisions(ctx, session, r, nil)
	if !all || len(ds) == 0 {
		return
	}
	_, err = host.Command(ctx, session, actors.VerbResume, actors.ResumeCommand{RunID: run, Decisions: ds})
	if err != nil && !errors.Is(err, actors.ErrAlreadyDecided) && !errors.Is(err, actors.ErrNotWaiting) {
		s.warn(ctx, "deliver the end of sub-runs", "session", session, "run", run, "err", err)
	}
}

// endedDecisions returns the decisions that settle the items of waiting
// run r that wait for sub-runs which have ended, except those decided
// already (a person's resume of a parent's own items carries them), and
// whether they settle every item r waits for (none is a person's, no
// child is still going).
func (s *subruns) endedDecisions(ctx context.Context, session string, r *actors.RunState, decided []actors.Decision) (ds []actors.Decision, all bool) {
	have := map[string]bool{}
	for _, d := range decided {
		have[d.ID] = true
	}
	all = true
	for _, it := range r.Pending() {
		if have[it.ID] {
			continue
		}
		ref, ok := subrunOf(it.Metadata)
		if !ok {
			all = false
			continue
		}
		d, usage, ended := s.childEnd(ctx, session, r.ID, it.ID, ref)
		if !ended {
			all = false
			continue
		}
		cd := d.command()
		cd.Usage = usage // the child's usage counts against the parent's limits
		ds = append(ds, cd)
	}
	return ds, all
}

// warn logs a delivery that failed, unless ctx ended (the node stops).
func (s *subruns) warn(ctx context.Context, msg string, args ...any) {
	if ctx.Err() == nil {
		s.rt.host.Logger().Warn(msg, args...)
	}
}

// childEnd returns the decision that settles call of the parent with the
// end of child ref, and whether the child has ended. A child run that does
// not name this call as its parent fails the call. usage is the child's.
func (s *subruns) childEnd(ctx context.Context, session, run, call string, ref actors.SubrunRef) (d Decision, usage *events.Usage, ended bool) {
	cst, err := s.rt.host.ReadSession(ctx, ref.SessionID)
	if err != nil {
		s.warn(ctx, "deliver the end of a sub-run: read the child session", "session", session, "run", run, "child", ref.SessionID, "err", err)
		return Decision{}, nil, false
	}
	cr := cst.Runs[ref.RunID]
	if cr == nil {
		return Decision{}, nil, false
	}
	details := map[string]any{"session_id": ref.SessionID, "run_id": ref.RunID, "agent": ref.Agent}
	if p, _ := actors.ParentOf(cr.Metadata); p.SessionID != session || p.RunID != run || p.ToolCallID != call {
		return FailWith(call, subrunBy, "the child session's run is not a sub-run of this call", details), nil, true
	}
	u := cr.Usage
	u.Details = nil
	switch cr.Status {
	case actors.StatusCompleted:
		return Complete(call, subrunBy, cr.Output), &u, true
	case actors.StatusFailed:
		kind, msg := "", ""
		if cr.Error != nil {
			kind, msg = cr.Error.Kind, cr.Error.Message
		}
		details["kind"], details["message"] = kind, msg
		return FailWith(call, subrunBy, fmt.Sprintf("the sub-run of agent %q failed (%s): %s", ref.Agent, kind, msg), details), &u, true
	case actors.StatusCancelled:
		details["kind"], details["message"] = "cancelled", cr.CancelReason
		return FailWith(call, subrunBy, fmt.Sprintf("the sub-run of agent %q was cancelled: %s", ref.Agent, cr.CancelReason), details), &u, true
	}
	return Decision{}, nil, false
}

// cancelChildren cancels the children of run of session that have not
// ended: the run ended as status.
func (s *subruns) cancelChildren(ctx context.Context, session, run, status string) {
	st, err := s.rt.host.ReadSession(ctx, session)
	if err != nil {
		s.warn(ctx, "cancel sub-runs: read the parent session", "session", session, "run", run, "err", err)
		return
	}
	r := st.Runs[run]
	if r == nil {
		return
	}
	reg, _ := s.rt.host.RunRegistry(session, run)
	for _, call := range mayHaveChild(r) {
		if !isAgentTool(reg, callTool(r, call)) {
			continue
		}
		child, childRun := childIDs(session, run, call)
		// A child that was never started has nothing to cancel: one read
		// of its stream says so, where a command would start its session
		// (and, on a cluster, take its lease) only to be refused.
		if cst, err := s.rt.host.ReadSession(ctx, child); err == nil && cst.Runs[childRun] == nil {
			continue
		}
		s.cancelChild(ctx, child, childRun, "the parent run was "+status)
	}
}

// callTool returns the name call of run r was called by.
func callTool(r *actors.RunState, call string) string {
	for _, c := range r.Batch {
		if c.ID == call {
			return c.Tool
		}
	}
	return ""
}

// cancelChild cancels child run run of session unless it has ended.
func (s *subruns) cancelChild(ctx context.Context, session, run, reason string) {
	_, err := s.rt.host.Command(ctx, session, actors.VerbCancel, actors.CancelCommand{RunID: run, By: "weft.parent", Reason: reason})
	if err != nil && !errors.Is(err, actors.ErrRunEnded) && !errors.Is(err, actors.ErrUnknownRun) {
		s.warn(ctx, "cancel a sub-run", "session", session, "run", run, "err", err)
	}
}

// fanOutIndex returns the position (from 1) of call among the calls of
// agent tools in the current response of the parent run. A call is one of
// an agent tool by what the name it was called by resolves to in the
// parent's registry (isAgentTool), so a renamed agent tool counts too.
// The calls of the response are those the tool host dispatched the call
// with (a program's calls, in code mode, are among them: each is recorded
// in the run's batch before it is dispatched); a call the host did not
// dispatch here reads them from the parent's session (fanOutInSession).
func (s *subruns) fanOutIndex(ctx context.Context, session, run, call string) (int, error) {
	host := s.rt.host
	reg, _ := host.RunRegistry(session, run)
	agent := func(name string) bool { return isAgentTool(reg, name) }
	if batch, ok := host.RunBatch(session, run); ok {
		if n, found := fanOutPosition(batch, call, agent); found {
			return n, nil
		}
	}
	st, err := host.ReadSession(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("read the parent session: %w", err)
	}
	return fanOutInSession(st, run, call, agent)
}

// recoverScan delivers what a dead process left undelivered: it settles
// every parent whose children have all ended and cancels the children of
// ended parents (orphans). It acts on what sc folded from Recover's read
// of the whole log, so Recover folds it only when the runtime has agent
// tools.
func (s *subruns) recoverScan(ctx context.Context, sc *subrunScan) {
	ended, children := sc.ended, sc.children
	parents := map[runKey]bool{}
	for child, p := range children {
		pk := runKey{p.SessionID, p.RunID}
		switch {
		case ended[pk] && !ended[child]:
			s.cancelChild(ctx, child.session, child.run, "the parent run has ended")
		case !ended[pk]:
			parents[pk] = true
		}
	}
	for pk := range parents {
		s.settleParent(ctx, pk.session, pk.run)
	}
}
