package projections

import (
	"time"

	"github.com/weft-run/weft/events"
)

// SessionSummary is one session in a list of sessions (weft sessions, the
// HTTP API's GET /v1/sessions): its agent (of its first run), how many
// runs, the last run's status, how many items wait for a decision, how
// many events, when it last changed, and the poison quarantined in its
// stream.
type SessionSummary struct {
	SessionID  string    `json:"session_id"`
	Agent      string    `json:"agent"`
	Runs       int       `json:"runs"`
	LastStatus RunStatus `json:"last_status"`
	Pending    int       `json:"pending"`
	Events     int       `json:"events"`
	Updated    time.Time `json:"updated"`
	// Damaged lists the poison quarantined in the session's stream.
	Damaged []*events.PoisonError `json:"damaged,omitempty"`
}

// Summaries returns the summary of every session, in the order of
// Sessions.
func (a *Archive) Summaries() ([]SessionSummary, error) {
	ids := a.Sessions()
	out := make([]SessionSummary, 0, len(ids))
	for _, id := range ids {
		s, err := a.Session(id)
		if err != nil {
			return nil, err
		}
		row := SessionSummary{SessionID: id, Runs: len(s.Runs), Pending: len(s.Pending), Events: s.Events, Updated: s.Updated, Damaged: s.Damaged}
		if n := len(s.Runs); n > 0 {
			row.Agent, row.LastStatus = s.Runs[0].Agent, s.Runs[n-1].Status
		}
		out = append(out, row)
	}
	return out, nil
}
