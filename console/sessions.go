package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// sessionsPage lists sessions through the API, with its filters.
func (c *Console) sessionsPage(w http.ResponseWriter, r *http.Request) {
	q := url.Values{}
	in := r.URL.Query()
	for _, k := range []string{"agent", "status", "waiting", "since", "before"} {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	q.Set("limit", "200")
	var out struct {
		Sessions []projections.SessionSummary `json:"sessions"`
	}
	data := map[string]any{"Filter": map[string]string{"agent": in.Get("agent"), "status": in.Get("status"), "waiting": in.Get("waiting"),
		"since": in.Get("since"), "before": in.Get("before")}}
	err := c.call(r.Context(), callerOf(r.Context()).token, "GET", "/v1/sessions", q, nil, &out)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusBadRequest:
		data["Error"] = ae.Message // a filter the API refused, shown above the list
	case err != nil:
		c.fail(w, r, err)
		return
	}
	data["Sessions"] = out.Sessions
	c.render(w, r, "sessions", "Sessions", "sessions", data)
}

// sessionData is what the session page and its timeline show.
type sessionData struct {
	ID       string
	Archive  projections.SessionArchive
	Entries  []entry
	Runs     []runView
	Pending  []item
	Chain    string
	Broken   bool
	Approver bool
}

// readSession reads the session's stream from the log, as it is (after
// the API said the caller may read it; redactFor before showing it).
func (c *Console) readSession(r *http.Request, id string) ([]events.Event, error) {
	evs, err := c.store.ReadStream(r.Context(), events.SessionStream(id), 0)
	if err != nil {
		return nil, fmt.Errorf("read session %q: %w", id, err)
	}
	return evs, nil
}

// redactFor redacts evs in place unless the caller is an approver.
func redactFor(r *http.Request, evs []events.Event) error {
	if callerOf(r.Context()).p.approver() {
		return nil
	}
	for i := range evs {
		var err error
		if evs[i], err = events.Redact(evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// chainStatus says whether evs' hash chain holds, and where it breaks.
func chainStatus(evs []events.Event) (string, bool) {
	ce := events.VerifyChain(evs)
	if ce == nil {
		return "verified (plain hash chain)", false
	}
	chain := fmt.Sprintf("broken at version %d: %s", ce.Version, ce.Fault)
	if ce.Fault == events.FaultPrevHash && ce.Version > 1 {
		chain += fmt.Sprintf(" (version %d or the link to it was changed)", ce.Version-1)
	}
	return chain, true
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) (sessionData, bool) {
	id := r.PathValue("session")
	cl := callerOf(r.Context())
	d := sessionData{ID: id, Approver: cl.p.approver()}
	if err := c.call(r.Context(), cl.token, "GET", "/v1/sessions/"+url.PathEscape(id), nil, nil, &d.Archive); err != nil {
		c.fail(w, r, err)
		return d, false
	}
	evs, err := c.readSession(r, id)
	if err != nil {
		c.fail(w, r, err)
		return d, false
	}
	d.Chain, d.Broken = chainStatus(evs) // of the events as stored
	if err := redactFor(r, evs); err != nil {
		c.fail(w, r, err)
		return d, false
	}
	d.Entries = timeline(evs)
	d.Runs = runTree(evs, d.Archive)
	c.childStatuses(r, d.Runs)
	if d.Pending, err = c.pending(r, id, d.Archive.Runs); err != nil {
		c.fail(w, r, err)
		return d, false
	}
	return d, true
}

func (c *Console) sessionPage(w http.ResponseWriter, r *http.Request) {
	if d, ok := c.session(w, r); ok {
		c.render(w, r, "session", "Session "+d.ID, "sessions", d)
	}
}

// timelineFragment is the session page's live part alone (status,
// pending items, timeline), which the script fetches on each event.
func (c *Console) timelineFragment(w http.ResponseWriter, r *http.Request) {
	if d, ok := c.session(w, r); ok {
		c.render(w, r, "live", "", "", d)
	}
}

// sessionStream passes the session's API stream (events and model
// deltas) on to the browser.
func (c *Console) sessionStream(w http.ResponseWriter, r *http.Request) {
	c.proxy(w, r, "/v1/sessions/"+url.PathEscape(r.PathValue("session"))+"/events", url.Values{"deltas": {"true"}})
}

// download serves the session's events as JSONL, redacted unless the
// caller is an approver.
func (c *Console) download(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session")
	if err := c.call(r.Context(), callerOf(r.Context()).token, "GET", "/v1/sessions/"+url.PathEscape(id), nil, nil, nil); err != nil {
		c.fail(w, r, err)
		return
	}
	evs, err := c.readSession(r, id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if err := redactFor(r, evs); err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote("session-"+id+".jsonl"))
	enc := json.NewEncoder(w)
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			return
		}
	}
}
