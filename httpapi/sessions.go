package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-run/weft/projections"
)

// sessionRow is one session of GET /v1/sessions (the fields of weft
// sessions --json).
type sessionRow = projections.SessionSummary

// sessionFilter is the query of GET /v1/sessions.
type sessionFilter struct {
	agent         string
	status        projections.RunStatus
	waiting       *bool
	since, before time.Time
	limit         int
}

var runStatuses = []projections.RunStatus{projections.RunRunning, projections.RunWaiting, projections.RunCompleted, projections.RunFailed, projections.RunCancelled}

// parseSessionFilter reads agent, status, waiting, since, before and
// limit.
func parseSessionFilter(r *http.Request) (sessionFilter, error) {
	q := r.URL.Query()
	f := sessionFilter{agent: q.Get("agent"), status: projections.RunStatus(q.Get("status"))}
	if f.status != "" && !slices.Contains(runStatuses, f.status) {
		return f, fmt.Errorf("status %q: want running, waiting, completed, failed or cancelled", f.status)
	}
	if s := q.Get("waiting"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return f, fmt.Errorf("waiting %q: want true or false", s)
		}
		f.waiting = &b
	}
	for name, t := range map[string]*time.Time{"since": &f.since, "before": &f.before} {
		if s := q.Get(name); s != "" {
			v, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return f, fmt.Errorf("%s %q: want an RFC 3339 time such as 2026-12-01T15:04:05Z", name, s)
			}
			*t = v
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return f, fmt.Errorf("limit %q: want a positive number", s)
		}
		f.limit = n
	}
	return f, nil
}

// keep reports whether row passes f.
func (f sessionFilter) keep(row sessionRow) bool {
	switch {
	case f.agent != "" && row.Agent != f.agent,
		f.status != "" && row.LastStatus != f.status,
		f.waiting != nil && *f.waiting != (row.LastStatus == projections.RunWaiting),
		!f.since.IsZero() && row.Updated.Before(f.since),
		!f.before.IsZero() && !row.Updated.Before(f.before):
		return false
	}
	return true
}

// listSessions lists the sessions of the log, newest update first,
// filtered by agent (of the first run), status (of the last run), waiting
// (the last run waits for decisions), since and before (the last event's
// time) and limited to limit rows.
func (a *API) listSessions(w http.ResponseWriter, r *http.Request) {
	f, err := parseSessionFilter(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	rows := []sessionRow{}
	pos, err := a.views.read(r.Context(), func(ar *projections.Archive, _ *projections.Queue) error {
		all, err := ar.Summaries()
		for _, row := range all {
			if f.keep(row) {
				rows = append(rows, row)
			}
		}
		return err
	})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	sortRows(rows)
	if f.limit > 0 && len(rows) > f.limit {
		rows = rows[:f.limit]
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": rows, "position": pos})
}

// getSession returns a session's archive view (projections.SessionArchive).
func (a *API) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session")
	var out projections.SessionArchive
	_, err := a.views.read(r.Context(), func(ar *projections.Archive, _ *projections.Queue) error {
		var err error
		out, err = ar.Session(id)
		return err
	})
	if errors.Is(err, projections.ErrUnknownSession) {
		writeError(w, http.StatusNotFound, "unknown_session", fmt.Sprintf("no session %q in the log", id))
		return
	}
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// listPending lists the HITL queue, filtered by session and kind.
func (a *API) listPending(w http.ResponseWriter, r *http.Request) {
	session, kind := r.URL.Query().Get("session"), projections.PendingKind(r.URL.Query().Get("kind"))
	if kind != "" && kind != projections.PendingApproval && kind != projections.PendingDeferred && kind != projections.PendingElicitation {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("kind %q: want approval, deferred or elicitation", kind))
		return
	}
	items := []projections.QueueItem{}
	pos, err := a.views.read(r.Context(), func(_ *projections.Archive, q *projections.Queue) error {
		for _, it := range q.Items() {
			if (session == "" || it.SessionID == session) && (kind == "" || it.Kind == kind) {
				items = append(items, it)
			}
		}
		return nil
	})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": items, "position": pos})
}

// sortRows sorts rows newest update first, then by session id.
func sortRows(rows []sessionRow) {
	slices.SortFunc(rows, func(x, y sessionRow) int {
		if c := y.Updated.Compare(x.Updated); c != 0 {
			return c
		}
		return strings.Compare(x.SessionID, y.SessionID)
	})
}
