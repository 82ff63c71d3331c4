package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/weft-run/weft/projections"
)

// item is a pending item as a page shows it.
type item struct {
	projections.QueueItem
	Agent  string
	Args   string // pretty JSON
	Meta   string
	Schema string
	Since  string
}

// pending lists the queue through the API (filtered by session when not
// empty), oldest first, with each item's agent: the agent of its run in
// runs when the caller has the session's runs, else the first run's
// agent of the item's session, which it asks the API for.
func (c *Console) pending(r *http.Request, session string, runs []*projections.RunRecord) ([]item, error) {
	cl := callerOf(r.Context())
	q := url.Values{}
	if session != "" {
		q.Set("session", session)
	}
	var out struct {
		Pending []projections.QueueItem `json:"pending"`
	}
	if err := c.call(r.Context(), cl.token, "GET", "/v1/pending", q, nil, &out); err != nil {
		return nil, err
	}
	agents := map[string]string{}
	items := make([]item, 0, len(out.Pending))
	for _, it := range out.Pending {
		var a string
		if runs != nil {
			a = runAgent(runs, it.RunID)
		} else {
			var ok bool
			if a, ok = agents[it.SessionID]; !ok {
				a = c.sessionAgent(r, cl.token, it.SessionID)
				agents[it.SessionID] = a
			}
		}
		items = append(items, item{QueueItem: it, Agent: a, Args: pretty(it.Arguments), Meta: pretty(it.Metadata), Schema: pretty(it.Schema),
			Since: c.now().Sub(it.RequestedAt).Truncate(time.Second).String()})
	}
	return items, nil
}

// runAgent is the agent of run id in runs, or the first run's.
func runAgent(runs []*projections.RunRecord, id string) string {
	for _, rr := range runs {
		if rr.RunID == id {
			return rr.Agent
		}
	}
	if len(runs) > 0 {
		return runs[0].Agent
	}
	return ""
}

// sessionAgent asks the API for session's first run's agent: "" when
// there is none or the API refuses (a refusal other than 403 or 404 is
// logged).
func (c *Console) sessionAgent(r *http.Request, token, session string) string {
	var s struct {
		Runs []struct {
			Agent string `json:"agent"`
		} `json:"runs"`
	}
	err := c.call(r.Context(), token, "GET", "/v1/sessions/"+url.PathEscape(session), nil, nil, &s)
	var ae *apiError
	switch {
	case err == nil:
		if len(s.Runs) > 0 {
			return s.Runs[0].Agent
		}
	case errors.As(err, &ae) && (ae.Status == http.StatusForbidden || ae.Status == http.StatusNotFound):
	default:
		c.log.WarnContext(r.Context(), "console: the agent of a pending item's session", "session", session, "err", err)
	}
	return ""
}

func (c *Console) queuePage(w http.ResponseWriter, r *http.Request) {
	items, err := c.pending(r, "", nil)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, "queue", "HITL queue", "queue", items)
}

// queueItems is the queue's list alone, which the script fetches when an
// event says it changed.
func (c *Console) queueItems(w http.ResponseWriter, r *http.Request) {
	items, err := c.pending(r, "", nil)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, "items", "", "", items)
}

// queueStream passes the API's stream of the events that change the queue
// on to the browser.
func (c *Console) queueStream(w http.ResponseWriter, r *http.Request) {
	c.proxy(w, r, "/v1/events", url.Values{"type": {"approval.*,deferred.*,elicitation.*,run.waiting,run.completed,run.failed,run.cancelled,decision.*"}})
}

// proxy serves the API's event stream at path to the browser with the
// cookie's token (an EventSource cannot send headers).
func (c *Console) proxy(w http.ResponseWriter, r *http.Request, path string, q url.Values) {
	req := r.Clone(r.Context())
	req.URL = &url.URL{Path: path, RawQuery: q.Encode()}
	req.RequestURI = ""
	req.Header = http.Header{}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		req.Header.Set("Last-Event-ID", id)
	}
	if tok := callerOf(r.Context()).token; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	c.api.ServeHTTP(w, req)
}

// pretty indents JSON for a page; "" for none.
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	buf := bytes.NewBuffer(make([]byte, 0, len(raw)*2))
	if err := json.Indent(buf, raw, "", "  "); err != nil {
		return string(raw) // not JSON: as it is
	}
	return buf.String()
}
