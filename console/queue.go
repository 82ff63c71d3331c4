package console

import (
	"encoding/json"
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
// empty), oldest first, with each item's agent.
func (c *Console) pending(r *http.Request, session string) ([]item, error) {
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
		a, ok := agents[it.SessionID]
		if !ok {
			var s struct {
				Runs []struct {
					Agent string `json:"agent"`
				} `json:"runs"`
			}
			if err := c.call(r.Context(), cl.token, "GET", "/v1/sessions/"+url.PathEscape(it.SessionID), nil, nil, &s); err == nil && len(s.Runs) > 0 {
				a = s.Runs[0].Agent
			}
			agents[it.SessionID] = a
		}
		items = append(items, item{QueueItem: it, Agent: a, Args: pretty(it.Arguments), Meta: pretty(it.Metadata), Schema: pretty(it.Schema),
			Since: c.now().Sub(it.RequestedAt).Truncate(time.Second).String()})
	}
	return items, nil
}

func (c *Console) queuePage(w http.ResponseWriter, r *http.Request) {
	items, err := c.pending(r, "")
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, "queue", "HITL queue", "queue", items)
}

// queueItems is the queue's list alone, which the script fetches when an
// event says it changed.
func (c *Console) queueItems(w http.ResponseWriter, r *http.Request) {
	items, err := c.pending(r, "")
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, "items", "", "", items)
}

// queueStream passes the API's stream of the events that change the queue
// on to the browser.
func (c *Console) queueStream(w http.ResponseWriter, r *http.Request) {
	c.proxy(w, r, "/v1/events", url.Values{"type": {"approval.*,deferred.*,elicitation.*,run.*,decision.*"}})
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
	return jsonIndent(make([]byte, 0, len(raw)*2), raw)
}
