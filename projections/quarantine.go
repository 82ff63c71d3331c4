package projections

import (
	"slices"

	"github.com/weft-run/weft/events"
)

// Poison never stops a Runner. What it cannot fold it quarantines: it
// records an *events.PoisonError, tells the projections that keep such
// records (Quarantiner), and goes on with the next event:
//
//   - a stored message that is not a weft event (the store yields it as
//     an *events.PoisonError);
//   - an event that does not decode (events.Decode refuses its type,
//     schema version or data), for every projection;
//   - an event a projection's Apply refuses, for that projection (its
//     checkpoint stays before the event; the others apply it).
//
// The projections' checkpoints do not move past poison, so a later
// catch-up that starts before it reads it again; the Runner and the
// Quarantiner projections record each position once.

// Quarantiner is a projection that keeps the poison of its sessions (the
// Archive: a session with poison is damaged). The Runner calls Quarantine
// once per poison position, on its goroutine.
type Quarantiner interface {
	Quarantine(p *events.PoisonError)
}

// Poison returns what the runner quarantined so far, in the order it met
// it, each position once.
func (r *Runner) Poison() []*events.PoisonError { return slices.Clone(r.poison) }

// quarantine records p (refused by only, or by every projection when only
// is nil) and tells the Quarantiner projections.
func (r *Runner) quarantine(p *events.PoisonError, only Projection) {
	if !slices.ContainsFunc(r.poison, func(q *events.PoisonError) bool { return q.Position == p.Position }) {
		r.poison = append(r.poison, p)
	}
	for _, proj := range r.projs {
		if only != nil && proj != only {
			continue
		}
		if q, ok := proj.(Quarantiner); ok {
			q.Quarantine(p)
		}
	}
}
