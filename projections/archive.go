package projections

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
)

// RunStatus is where a run stands in the archive.
type RunStatus string

// The run statuses, from run.started, run.waiting, run.resumed and the
// run's end event.
const (
	RunRunning   RunStatus = "running"
	RunWaiting   RunStatus = "waiting"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// SessionArchive is everything the log says about one session.
type SessionArchive struct {
	SessionID string `json:"session_id"`
	Stream    string `json:"stream"`
	// Messages is the conversation as recorded: the messages of each
	// model.request (the first request of a run records the session's
	// whole conversation so far, which replaces the list; later requests
	// record the messages added since, which are appended) and the
	// message of each model.response, in log order (llm.Message JSON).
	Messages []json.RawMessage `json:"messages"`
	// Runs in start order.
	Runs []*RunRecord `json:"runs"`
	// Usage sums the runs' latest usage.snapshot (run scope).
	Usage events.Usage `json:"usage"`
	// Pending lists the open approvals and deferred calls in request
	// order.
	Pending []PendingItem `json:"pending"`
	// Toolsets are the toolsets the runs prepared, by name, from the
	// toolset.* events.
	Toolsets []ToolsetRecord `json:"toolsets"`
	// RequiredToolsets are the names of the toolsets the session needs to
	// be resumed or replayed: every toolset named by a toolset.* event or
	// a tool.requested event's toolset, sorted. The log records toolset
	// names (toolset.initialized), not the toolsets' ids.
	RequiredToolsets []string `json:"required_toolsets"`
	// LoadedTools are the tools loaded by tool search, sorted: from
	// tool_search.loaded events and from tool.progress events named
	// "tool_search.loaded" (how a search toolset reports a load).
	LoadedTools []string `json:"loaded_tools"`
	// Events counts the session's events; Updated is the time of the last.
	Events  int       `json:"events"`
	Updated time.Time `json:"updated"`
	// Damaged lists the poison the Runner quarantined in the session's
	// stream, in log order (absent for a sound session). A damaged
	// session's archive is what the rest of its events say.
	Damaged []*events.PoisonError `json:"damaged,omitempty"`
}

// RunRecord is one run of a session.
type RunRecord struct {
	RunID       string          `json:"run_id"`
	Agent       string          `json:"agent,omitempty"`
	ParentRunID string          `json:"parent_run_id,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	Status      RunStatus       `json:"status"`
	// Output is run.completed's output; Error run.failed's error;
	// Cancel run.cancelled's data.
	Output json.RawMessage      `json:"output,omitempty"`
	Error  *events.ErrorInfo    `json:"error,omitempty"`
	Cancel *events.RunCancelled `json:"cancel,omitempty"`
	// Usage is the run's latest usage.snapshot (or its end event's).
	Usage events.Usage `json:"usage"`
	// ModelRequests and ToolCalls count model.request and tool.requested.
	ModelRequests int        `json:"model_requests"`
	ToolCalls     int        `json:"tool_calls"`
	Started       time.Time  `json:"started"`
	Ended         *time.Time `json:"ended,omitempty"`
}

// ToolsetRecord is the latest state of a toolset in a session.
type ToolsetRecord struct {
	Name string `json:"name"`
	// Status is the suffix of the latest toolset.* event (initialized,
	// refreshed, closed, unavailable, failed).
	Status string            `json:"status"`
	Tools  []string          `json:"tools,omitempty"`
	Error  *events.ErrorInfo `json:"error,omitempty"`
}

// Archive is the session-archive projection: one SessionArchive per
// session in the log.
type Archive struct {
	checkpoint
	sessions map[string]*archiveState
}

// archiveState is a session's archive while it is folded.
type archiveState struct {
	SessionArchive
	runs     map[string]*RunRecord
	pending  map[string]PendingItem // by tool call id
	suspend  map[string]string      // call id -> reason of its suspending return
	tools    map[string]string      // call id -> tool
	toolsets map[string]*ToolsetRecord
	required map[string]bool
	loaded   map[string]bool
}

var (
	_ Projection  = (*Archive)(nil)
	_ Quarantiner = (*Archive)(nil)
)

// NewArchive returns an empty session-archive projection.
func NewArchive() *Archive { return &Archive{sessions: map[string]*archiveState{}} }

// Name returns "archive".
func (a *Archive) Name() string { return "archive" }

// Reset empties the archive.
func (a *Archive) Reset() { *a = *NewArchive() }

// Sessions returns the ids of the archived sessions, sorted.
func (a *Archive) Sessions() []string { return slices.Sorted(maps.Keys(a.sessions)) }

// Session returns the archive of session id (a copy of its slices' headers:
// do not modify it), or ErrUnknownSession.
func (a *Archive) Session(id string) (SessionArchive, error) {
	s, ok := a.sessions[id]
	if !ok {
		return SessionArchive{}, &Error{Op: "session", Projection: a.Name(), Err: fmt.Errorf("%w: %q", ErrUnknownSession, id)}
	}
	return s.snapshot(), nil
}

// Render writes every session's archive, sorted by session id, as a JSON
// array.
func (a *Archive) Render(w io.Writer) error {
	out := make([]SessionArchive, 0, len(a.sessions))
	for _, id := range a.Sessions() {
		out = append(out, a.sessions[id].snapshot())
	}
	return render(w, a.Name(), out)
}

// Apply folds ev into its session's archive. Events without a session id
// only move the checkpoint.
func (a *Archive) Apply(ev Decoded) error {
	if a.seen(ev.Position) {
		return nil
	}
	if ev.SessionID != "" {
		if err := a.apply(ev); err != nil {
			return err
		}
	}
	a.pos = ev.Position
	return nil
}

// state returns the state of session id in stream, new when the archive
// has none.
func (a *Archive) state(id, stream string) *archiveState {
	s := a.sessions[id]
	if s == nil {
		s = &archiveState{SessionArchive: SessionArchive{SessionID: id, Stream: stream},
			runs: map[string]*RunRecord{}, pending: map[string]PendingItem{}, suspend: map[string]string{},
			tools: map[string]string{}, toolsets: map[string]*ToolsetRecord{}, required: map[string]bool{}, loaded: map[string]bool{}}
		a.sessions[id] = s
	}
	return s
}

// Quarantine marks the session whose stream holds p as damaged (listing
// the session when p is all the log has of it). Poison outside session
// streams is not the archive's.
func (a *Archive) Quarantine(p *events.PoisonError) {
	id := p.SessionID()
	if id == "" {
		return
	}
	s := a.state(id, p.Stream)
	if !slices.ContainsFunc(s.Damaged, func(q *events.PoisonError) bool { return q.Position == p.Position }) {
		s.Damaged = append(s.Damaged, p)
	}
}

func (a *Archive) apply(ev Decoded) error {
	s := a.state(ev.SessionID, ev.Stream)
	s.Events++
	s.Updated = ev.Time
	run := s.runs[ev.RunID]
	if run == nil && ev.RunID != "" {
		// A run whose run.started is not in the log (a truncated log):
		// keep what follows under a running run.
		run = &RunRecord{RunID: ev.RunID, Status: RunRunning, Started: ev.Time}
		s.runs[ev.RunID] = run
		s.Runs = append(s.Runs, run)
	}
	if run == nil {
		run = &RunRecord{} // session-level event: fold into a scratch run
	}
	end := func(st RunStatus, u *events.Usage) {
		run.Status = st
		t := ev.Time
		run.Ended = &t
		if u != nil {
			run.Usage = *u
		}
		for id, p := range s.pending {
			if p.RunID == run.RunID {
				delete(s.pending, id)
			}
		}
	}
	switch d := ev.Data.(type) {
	case events.RunStarted:
		run.Agent, run.ParentRunID, run.Input, run.Started = d.Agent, d.ParentRunID, d.Input, ev.Time
	case events.RunWaiting:
		run.Status = RunWaiting
	case events.RunResumed:
		run.Status = RunRunning
	case events.RunCompleted:
		run.Output = d.Output
		end(RunCompleted, d.Usage)
	case events.RunFailed:
		e := d.Error
		run.Error = &e
		end(RunFailed, d.Usage)
	case events.RunCancelled:
		c := d
		run.Cancel = &c
		end(RunCancelled, nil)
	case events.ModelRequest:
		msgs, ok := splitArray(d.Messages)
		if !ok && len(d.Messages) > 0 {
			if err := json.Unmarshal(d.Messages, &msgs); err != nil {
				return &Error{Op: "apply", Projection: "archive", Position: ev.Position, Type: ev.Type, Err: fmt.Errorf("%w: messages: %v", events.ErrMalformed, err)}
			}
		}
		if run.ModelRequests == 0 {
			s.Messages = msgs
		} else {
			s.Messages = append(s.Messages, msgs...)
		}
		run.ModelRequests++
	case events.ModelResponse:
		if len(d.Message) > 0 {
			s.Messages = append(s.Messages, d.Message)
		}
	case events.ToolRequested:
		run.ToolCalls++
		s.tools[ev.ToolCallID] = d.Tool
		if d.Toolset != "" {
			s.required[d.Toolset] = true
		}
	case events.ToolReturned:
		if r := ev.suspendReason(d.Return); r != "" {
			s.suspend[ev.ToolCallID] = r
		}
	case events.ApprovalRequested:
		s.pending[ev.ToolCallID] = PendingItem{Kind: PendingApproval, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
			Tool: d.Tool, Arguments: d.Arguments, Reason: d.Reason, Metadata: d.Metadata, RequestedAt: ev.Time, Position: ev.Position}
	case events.DeferredRequested:
		s.pending[ev.ToolCallID] = PendingItem{Kind: PendingDeferred, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
			Tool: d.Tool, Arguments: d.Arguments, Reason: s.suspend[ev.ToolCallID], Metadata: d.Metadata, RequestedAt: ev.Time, Position: ev.Position}
	case events.ApprovalDecided, events.DeferredResolved:
		delete(s.pending, ev.ToolCallID)
	case events.UsageSnapshot:
		if d.Scope == "" || d.Scope == "run" {
			run.Usage = d.Usage
		}
	case events.ToolsetInitialized:
		s.toolset(d.Toolset, "initialized", d.Tools, nil)
	case events.ToolsetRefreshed:
		s.toolset(d.Toolset, "refreshed", d.Tools, nil)
	case events.ToolsetClosed:
		s.toolset(d.Toolset, "closed", nil, nil)
	case events.ToolsetUnavailable:
		s.toolset(d.Toolset, "unavailable", nil, &d.Error)
	case events.ToolsetFailed:
		s.toolset(d.Toolset, "failed", nil, &d.Error)
	case events.ToolSearchLoaded:
		for _, t := range d.Tools {
			s.loaded[t] = true
		}
	case events.ToolProgress:
		if d.Name == searchLoadedProgress && len(d.Data) > 0 {
			var rec struct {
				Tools []string `json:"tools"`
			}
			if err := json.Unmarshal(d.Data, &rec); err == nil {
				for _, t := range rec.Tools {
					s.loaded[t] = true
				}
			}
		}
	}
	return nil
}

// searchLoadedProgress is the name of the tool progress a search toolset
// emits when it loads tools (toolsets.OnSearch).
const searchLoadedProgress = "tool_search.loaded"

// toolset records the latest state of toolset name; tools nil keeps the
// tools known.
func (s *archiveState) toolset(name, status string, tools []string, e *events.ErrorInfo) {
	if name == "" {
		return
	}
	s.required[name] = true
	ts := s.toolsets[name]
	if ts == nil {
		ts = &ToolsetRecord{Name: name}
		s.toolsets[name] = ts
	}
	ts.Status, ts.Error = status, e
	if tools != nil {
		ts.Tools = tools
	}
}

// snapshot returns the archive with its derived fields in their
// deterministic order.
func (s *archiveState) snapshot() SessionArchive {
	out := s.SessionArchive
	out.Runs = slices.Clone(s.Runs)
	out.Messages = slices.Clone(s.Messages)
	if out.Messages == nil {
		out.Messages = []json.RawMessage{}
	}
	if out.Runs == nil {
		out.Runs = []*RunRecord{}
	}
	out.Damaged = slices.Clone(s.Damaged)
	out.Usage = events.Usage{}
	for _, r := range s.Runs {
		addUsage(&out.Usage, r.Usage)
	}
	out.Pending = sortedPending(maps.Values(s.pending))
	out.Toolsets = []ToolsetRecord{}
	for _, name := range slices.Sorted(maps.Keys(s.toolsets)) {
		out.Toolsets = append(out.Toolsets, *s.toolsets[name])
	}
	out.RequiredToolsets = slices.Sorted(maps.Keys(s.required))
	out.LoadedTools = slices.Sorted(maps.Keys(s.loaded))
	if out.RequiredToolsets == nil {
		out.RequiredToolsets = []string{}
	}
	if out.LoadedTools == nil {
		out.LoadedTools = []string{}
	}
	return out
}

// addUsage adds u to sum.
func addUsage(sum *events.Usage, u events.Usage) {
	sum.Requests += u.Requests
	sum.InputTokens += u.InputTokens
	sum.OutputTokens += u.OutputTokens
	sum.CacheReadTokens += u.CacheReadTokens
	sum.CacheWriteTokens += u.CacheWriteTokens
	sum.ToolCalls += u.ToolCalls
	for k, v := range u.Details {
		if sum.Details == nil {
			sum.Details = map[string]int64{}
		}
		sum.Details[k] += v
	}
}

// sortedPending returns items in request order (position, then session
// and call id), never nil.
func sortedPending(items func(func(PendingItem) bool)) []PendingItem {
	out := []PendingItem{}
	for p := range items {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b PendingItem) int {
		if a.Position != b.Position {
			return cmpUint(a.Position, b.Position)
		}
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		return strings.Compare(a.ToolCallID, b.ToolCallID)
	})
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
