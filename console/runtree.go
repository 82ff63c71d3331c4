package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// The run tree on a session page: each run with the call of a parent run
// that started it (a sub-run: an agent called as a tool) and the sub-runs
// its own calls started, as links between the sessions. Both come from
// the session's own log: run.started's parent fields, and the metadata
// actors.MetaSubrun of the deferred call that waits for a sub-run. The
// parent half repeats what projections.Tree folds; the children come from
// the deferred calls, which it does not read.

// runView is a run of the session page.
type runView struct {
	ID       string
	Agent    string
	Status   projections.RunStatus
	Parent   *parentLink
	Children []childLink
}

// parentLink names the parent run's call that started a sub-run.
type parentLink struct {
	SessionID, RunID, Call string
	Depth                  int
}

// childLink is a sub-run a run's call started.
type childLink struct {
	SessionID, RunID, Agent, Call string
	// Status is the child run's status, "" when the caller may not read
	// the child session.
	Status projections.RunStatus
}

// runTree returns the session's runs in start order, with their parent
// calls and sub-runs, from its events; statuses come from the archive.
func runTree(evs []events.Event, archive projections.SessionArchive) []runView {
	var runs []runView
	at := map[string]int{}
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeRunStarted:
			var d events.RunStarted
			_ = json.Unmarshal(ev.Data, &d)
			if _, ok := at[ev.RunID]; ok {
				continue
			}
			r := runView{ID: ev.RunID, Agent: d.Agent}
			if d.ParentSessionID != "" {
				r.Parent = &parentLink{SessionID: d.ParentSessionID, RunID: d.ParentRunID, Call: d.ParentToolCallID, Depth: d.Depth}
			}
			at[ev.RunID] = len(runs)
			runs = append(runs, r)
		case events.TypeDeferredRequested:
			i, ok := at[ev.RunID]
			if !ok {
				continue
			}
			var d events.DeferredRequested
			_ = json.Unmarshal(ev.Data, &d)
			var md map[string]json.RawMessage
			if json.Unmarshal(d.Metadata, &md) != nil {
				continue
			}
			if c := actors.SubrunFrom(md[actors.MetaSubrun]); c.SessionID != "" && !hasChild(runs[i].Children, c.SessionID) {
				runs[i].Children = append(runs[i].Children, childLink{SessionID: c.SessionID, RunID: c.RunID, Agent: c.Agent, Call: ev.ToolCallID})
			}
		}
	}
	for _, a := range archive.Runs {
		if i, ok := at[a.RunID]; ok {
			runs[i].Status = a.Status
		}
	}
	return runs
}

// hasChild says whether a child session is listed already (a deferred
// call requested again names the same child).
func hasChild(list []childLink, session string) bool {
	return slices.ContainsFunc(list, func(c childLink) bool { return c.SessionID == session })
}

// childStatuses fills the sub-runs' statuses from their sessions, read
// through the API as the caller (a session it may not read keeps none).
func (c *Console) childStatuses(r *http.Request, runs []runView) {
	cl := callerOf(r.Context())
	for i := range runs {
		for j := range runs[i].Children {
			ch := &runs[i].Children[j]
			var a projections.SessionArchive
			if c.call(r.Context(), cl.token, "GET", "/v1/sessions/"+url.PathEscape(ch.SessionID), nil, nil, &a) != nil {
				continue
			}
			for _, run := range a.Runs {
				if run.RunID == ch.RunID {
					ch.Status = run.Status
				}
			}
		}
	}
}
