package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// ErrMissingToolset: a session archive requires a toolset id the agent it
// is restored into does not have.
var ErrMissingToolset = errors.New("weft: the agent lacks a toolset the archive requires")

// ErrSessionExists: a session archive is restored under an id whose
// session already has other events.
var ErrSessionExists = errors.New("weft: a different session with that id exists")

// SessionArchive is a serialisable copy of a session (encode it as JSON):
// its events (the truth, replayed on restore), and what they fold to for
// readers — the message history, a summary of its runs, the loaded tool
// search state — plus the ids of the toolsets its agent had, which a
// restoring agent must have. Go values (tools, toolsets, policies) are
// never serialised: the restored session uses the current agent's.
type SessionArchive struct {
	SessionID string `json:"session_id"`
	// Agent is the agent the session ran with.
	Agent string `json:"agent"`
	// RequiredToolsetIDs are the ids of the agent's toolsets.
	RequiredToolsetIDs []string      `json:"required_toolset_ids"`
	Messages           []llm.Message `json:"messages"`
	Runs               []ArchivedRun `json:"runs"`
	// State holds session state: tool_search_loaded_tools and
	// tool_search_loaded_namespaces.
	State  map[string]any `json:"state"`
	Events []events.Event `json:"events"`
}

// ArchivedRun summarises one run of an archived session.
type ArchivedRun struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	Prompt string `json:"prompt"`
	Output string `json:"output,omitempty"`
}

// Export returns the session's archive.
func (s *Session) Export(ctx context.Context) (*SessionArchive, error) {
	evs, err := s.Events(ctx, "")
	if err != nil {
		return nil, err
	}
	st, err := s.state(ctx)
	if err != nil {
		return nil, fmt.Errorf("weft: export session %q: %w", s.id, err)
	}
	ar := &SessionArchive{SessionID: s.id, Agent: s.agent.spec.Name, RequiredToolsetIDs: s.agent.ToolsetIDList(),
		Messages: st.History, State: st.LoadedSearchState().Export(), Events: evs}
	if r := st.ActiveRun(); r != nil {
		ar.Messages = st.Conversation(r)
	}
	for _, id := range st.Order {
		r := st.Runs[id]
		ar.Runs = append(ar.Runs, ArchivedRun{ID: r.ID, Status: Status(r.Status), Prompt: r.Prompt, Output: r.Output})
	}
	return ar, nil
}

// RestoreSession restores an archived session into the agent, under the
// archive's session id, and returns it. Every toolset id the archive
// requires must be among the agent's (else ErrMissingToolset, naming the
// id). The session's events are appended to the runtime's log (with new
// event ids; run.started names this agent), unless the log already holds
// this very session (a restart on the same log), in which case nothing is
// written. A waiting run can be resumed; it then uses this agent's
// approval policy and toolsets. The loaded tool search state is rebuilt
// from the events when the session next runs.
func (a *Agent) RestoreSession(ctx context.Context, ar *SessionArchive) (*Session, error) {
	if ar == nil || ar.SessionID == "" {
		return nil, errors.New("weft: restore: an archive needs a session id")
	}
	have := a.ToolsetIDList()
	for _, id := range ar.RequiredToolsetIDs {
		if !slices.Contains(have, id) {
			return nil, fmt.Errorf("%w: %q (agent %q has %v)", ErrMissingToolset, id, a.spec.Name, have)
		}
	}
	s := a.Session(ar.SessionID)
	existing, err := s.Events(ctx, "")
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		if len(existing) == len(ar.Events) {
			return s, nil
		}
		return nil, fmt.Errorf("%w: %q has %d events, the archive %d", ErrSessionExists, ar.SessionID, len(existing), len(ar.Events))
	}
	if len(ar.Events) == 0 {
		return s, nil
	}
	evs := make([]events.Event, len(ar.Events))
	for i, ev := range ar.Events {
		ev.ID = uuid.Must(uuid.NewV7())
		ev.Stream, ev.Version, ev.Position, ev.PrevHash = "", 0, 0, ""
		ev.SessionID = ar.SessionID
		if ev.Type == events.TypeRunStarted {
			var d events.RunStarted
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return nil, fmt.Errorf("weft: restore: run.started: %w: %v", events.ErrMalformed, err)
			}
			d.Agent = a.spec.Name
			b, err := json.Marshal(d)
			if err != nil {
				return nil, fmt.Errorf("weft: restore: %w", err)
			}
			ev.Data = b
		}
		evs[i] = ev
	}
	if _, err := a.rt.store.Append(ctx, events.SessionStream(ar.SessionID), events.NoStream, evs...); err != nil {
		return nil, fmt.Errorf("weft: restore session %q: %w", ar.SessionID, err)
	}
	return s, nil
}
