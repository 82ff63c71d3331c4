package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// eventFilter is the filter of GET /v1/events: event types (exact, or a
// prefix ending in ".*" such as "run.*") and NATS subject filters over the
// event subjects (<root>.evt.<category>.<id>.<type>); an event passes when
// it matches a type (or none is given) and a subject filter (or none is).
// A subject filter that can match no event subject is refused.
type eventFilter struct {
	types    []string
	subjects []string
}

func parseEventFilter(r *http.Request, subj bus.Subjects) (eventFilter, error) {
	var f eventFilter
	q := r.URL.Query()
	for _, v := range q["type"] {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			base := strings.TrimSuffix(t, ".*")
			if !events.Type(base).Known() && !knownPrefix(base) {
				return f, fmt.Errorf("type %q is not an event type of the catalogue (nor a prefix of one followed by .*)", t)
			}
			f.types = append(f.types, t)
		}
	}
	for _, v := range q["subject"] {
		if err := subj.CheckEventFilter(v); err != nil {
			if fe, ok := errors.AsType[*bus.FilterError](err); ok {
				return f, fmt.Errorf("subject %q: %s", v, fe.Reason)
			}
			return f, err
		}
		f.subjects = append(f.subjects, v)
	}
	return f, nil
}

// knownPrefix reports whether p is the dotted prefix of a catalogue type.
func knownPrefix(p string) bool {
	return slices.ContainsFunc(events.Types(), func(t events.Type) bool { return strings.HasPrefix(string(t), p+".") })
}

func (f eventFilter) keep(ev events.Event, subject string) bool {
	if len(f.types) > 0 && !slices.ContainsFunc(f.types, func(t string) bool {
		base, prefix := strings.CutSuffix(t, ".*")
		return prefix && strings.HasPrefix(string(ev.Type), base+".") || string(ev.Type) == t
	}) {
		return false
	}
	if len(f.subjects) > 0 && !slices.ContainsFunc(f.subjects, func(filter string) bool { return bus.SubjectMatches(filter, subject) }) {
		return false
	}
	return true
}

// allEvents streams the events of every stream as SSE, in log order, id:
// their log position: from the client's Last-Event-ID (or ?after=; 0 is
// the log's start), else from now; filtered by ?type= and ?subject=. It
// follows the store's subscription, which has no gap and no repeat between
// its catch-up and its live phase.
func (a *API) allEvents(w http.ResponseWriter, r *http.Request) {
	f, err := parseEventFilter(r, a.rt.Subjects())
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	after, given, err := resumePosition(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	if !given {
		// From now: the log's end as the views reach it.
		if after, err = a.views.read(ctx, nil); err != nil {
			cancel()
			writeRuntimeError(w, err)
			return
		}
	}
	sw, err := startSSE(w)
	if err != nil {
		cancel()
		return
	}
	subj := a.rt.Subjects()
	type item struct {
		ev  events.Event
		err error
	}
	items := make(chan item)
	defer func() {
		cancel()
		for range items { // wait for the subscription to end
		}
	}()
	go func() {
		defer close(items)
		for ev, err := range a.rt.Store().Subscribe(ctx, after) {
			select {
			case items <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.Is(err, events.ErrPoison) {
				return
			}
		}
	}()
	tick := time.NewTicker(a.keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.done:
			return
		case <-tick.C:
			if sw.comment("keep-alive") != nil {
				return
			}
		case it, ok := <-items:
			switch {
			case !ok:
				return
			case errors.Is(it.err, events.ErrPoison):
				continue // quarantined by the readers of the log
			case it.err != nil:
				a.streamEnded(r, it.err)
				return
			}
			subject, err := subj.Event(it.ev.Stream, string(it.ev.Type))
			if err != nil || !f.keep(it.ev, subject) {
				continue
			}
			if sw.sendStored(it.ev) != nil {
				return
			}
		}
	}
}
