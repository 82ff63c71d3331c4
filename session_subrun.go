package weft

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-run/weft/actors"
)

// settlePoll is how often Settle looks at the sub-runs of a run that
// waits only for them (a child that starts waiting for a person tells the
// parent's watchers nothing).
const settlePoll = 100 * time.Millisecond

// Settle returns the outcome of run runID once it has ended, or once it
// waits for a person: for its own pending items, or because one of the
// sub-runs it waits for (AgentTool), at any depth, does. A run that waits
// only for sub-runs that are still working is waited for. The items of
// the sub-runs that wait for a person are in Result.Subruns, each with
// its parent chain; decide them on the child's session. When ctx ends,
// Settle returns ctx's error and the run goes on; when the session's
// actor stops without settling the run, ErrUnavailable.
func (s *Session) Settle(ctx context.Context, runID string) (*Result, error) {
	host := s.agent.rt.host
	ch, stop := host.Watch(runID)
	defer stop()
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for {
		st, err := host.ReadSession(ctx, s.id)
		if err != nil {
			return nil, fmt.Errorf("weft: settle: %w", err)
		}
		o, ok := st.Outcome(runID)
		if !ok {
			return nil, fmt.Errorf("weft: settle run %q: %w", runID, ErrUnknownRun)
		}
		if o.Status.Ended() || (o.Status == actors.StatusWaiting && !onlySubruns(o.Pending)) {
			return finish(o)
		}
		if o.Status == actors.StatusWaiting {
			waiting, err := s.agent.rt.subs().waitingDescendants(ctx, s.id, runID, o.Pending, nil)
			if err != nil {
				return nil, err
			}
			if len(waiting) > 0 {
				res, err := finish(o)
				if res != nil {
					res.Subruns = waiting
				}
				return res, err
			}
		}
		select {
		case o := <-ch:
			if o.Lost != nil {
				return finish(o) // nobody drives the run: ErrUnavailable
			}
		case <-tick.C:
		case <-host.Done():
			return nil, fmt.Errorf("weft: settle run %q: %w", runID, ErrClosed)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// onlySubruns reports whether every item waits for a sub-run.
func onlySubruns(items []actors.PendingItem) bool {
	for _, it := range items {
		if _, ok := subrunOf(it.Metadata); !ok {
			return false
		}
	}
	return len(items) > 0
}

// SubrunItem is a pending item of a sub-run, with the chain of parent
// calls above it (the root run's first).
type SubrunItem struct {
	PendingItem
	// SessionID and RunID are the sub-run's, whose session decides it.
	SessionID string
	RunID     string
	// Agent is the sub-run's agent.
	Agent string
	// Parents are the calls above the sub-run, the root's first.
	Parents []ParentCall
}

// ParentCall is a parent run's call that waits for a sub-run.
type ParentCall struct {
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
}

// waitingDescendants returns the items of the sub-runs below run (waiting
// for items) that wait for a person, depth first.
func (s *subruns) waitingDescendants(ctx context.Context, session, run string, items []actors.PendingItem, chain []ParentCall) ([]SubrunItem, error) {
	var out []SubrunItem
	for _, it := range items {
		ref, ok := subrunOf(it.Metadata)
		if !ok {
			continue
		}
		st, err := s.rt.host.ReadSession(ctx, ref.SessionID)
		if err != nil {
			return nil, fmt.Errorf("weft: read sub-run session %q: %w", ref.SessionID, err)
		}
		cr := st.Runs[ref.RunID]
		if cr == nil || cr.Status != actors.StatusWaiting {
			continue
		}
		parents := append(append([]ParentCall(nil), chain...), ParentCall{SessionID: session, RunID: run, ToolCallID: it.ID})
		pend := cr.Pending()
		for _, p := range pend {
			if _, sub := subrunOf(p.Metadata); sub {
				continue
			}
			out = append(out, SubrunItem{PendingItem: pendingItemOf(p), SessionID: ref.SessionID, RunID: ref.RunID, Agent: cr.Agent, Parents: parents})
		}
		deeper, err := s.waitingDescendants(ctx, ref.SessionID, ref.RunID, pend, parents)
		if err != nil {
			return nil, err
		}
		out = append(out, deeper...)
	}
	return out, nil
}
