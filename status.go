package weft

import (
	"context"
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// SessionStatus is where a session stands, folded from its events: its
// runs in start order, the run that is running or waiting, and what its
// tool-search and tool-proxy toolsets have loaded. It is a copy: later
// events do not change it.
type SessionStatus struct {
	SessionID string
	// Version is the version of the session's last event (0: no event
	// yet, a session that never ran).
	Version uint64
	// Runs are the session's runs in start order.
	Runs []RunSummary
	// Active is the id of the run that is running or waiting; "" when
	// none is.
	Active string
	// Loaded is what the session's tool-search and tool-proxy toolsets
	// have loaded (tool names and their toolset ids), as a session
	// archive exports it.
	Loaded toolsets.SearchState
}

// RunSummary is one run of a SessionStatus.
type RunSummary struct {
	ID     string
	Agent  string
	Prompt string
	Status Status
	// Output is the model's final text (completed runs).
	Output string
	// Usage is what the run has consumed so far.
	Usage events.Usage
	// Pending is what the run waits for (waiting runs).
	Pending Pending
	// Err is why the run failed; nil otherwise.
	Err *RunError
}

// Run returns the summary of run id and whether the session has it.
func (s *SessionStatus) Run(id string) (RunSummary, bool) {
	for _, r := range s.Runs {
		if r.ID == id {
			return r, true
		}
	}
	return RunSummary{}, false
}

// ActiveRun returns the run that is running or waiting, and false when
// none is.
func (s *SessionStatus) ActiveRun() (RunSummary, bool) {
	if s.Active == "" {
		return RunSummary{}, false
	}
	return s.Run(s.Active)
}

// Status returns where the session stands, read from its events (from the
// event store, so on any node of a cluster). A session with no events has
// no runs and version 0.
func (s *Session) Status(ctx context.Context) (*SessionStatus, error) {
	st, err := s.state(ctx)
	if err != nil {
		return nil, fmt.Errorf("weft: status of session %q: %w", s.id, err)
	}
	return statusOf(st), nil
}

// state returns the session's state, folded from its events.
func (s *Session) state(ctx context.Context) (*actors.SessionState, error) {
	return s.agent.rt.host.ReadSession(ctx, s.id)
}

func statusOf(st *actors.SessionState) *SessionStatus {
	out := &SessionStatus{SessionID: st.SessionID, Version: st.Version, Active: st.Active, Loaded: st.LoadedSearchState()}
	for _, id := range st.Order {
		r := st.Runs[id]
		if r == nil {
			continue
		}
		rs := RunSummary{ID: r.ID, Agent: r.Agent, Prompt: r.Prompt, Status: Status(r.Status), Output: r.Output, Usage: r.Usage,
			Err: runErrorOf(r.ID, r.Error)}
		if r.Status == actors.StatusWaiting {
			rs.Pending = pendingOf(r.Pending())
		}
		out.Runs = append(out.Runs, rs)
	}
	return out
}
