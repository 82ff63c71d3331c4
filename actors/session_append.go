package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weft-run/weft/events"
)

// The session actor's store: it reads its stream once (load) and appends
// every change with the state's version as the expected version.

// load rebuilds the state from the session's stream. On failure the state
// stays nil and loadErr says why: ErrUnavailable when the store could not
// be read (JetStream restarting, a timeout: the next command tries again),
// ErrInternal when the fold refuses the stream, ErrInternal and
// ErrSessionDamaged when the stream holds poison or the store is damaged.
func (a *sessionActor) load() error {
	st := NewSessionState(a.id)
	evs, err := a.h.cfg.Store.ReadStream(a.store.get(), a.stream, 0)
	switch {
	case errors.Is(err, events.ErrStreamNotFound):
		evs = nil // a new session
	case errors.Is(err, events.ErrPoison) || errors.Is(err, events.ErrDamagedStore):
		// Retrying reads the same damage: the session is damaged.
		a.loadErr = fmt.Errorf("%w: %w", ErrSessionDamaged, err)
		a.h.log.Error("load session: damaged", "session", a.id, "err", err)
		return a.loadErr
	case err != nil:
		a.loadErr = fmt.Errorf("%w: read session: %w", ErrUnavailable, err)
		a.h.log.Warn("load session", "session", a.id, "err", err)
		return a.loadErr
	}
	for _, ev := range evs {
		if err := st.Apply(ev); err != nil {
			a.loadErr = fmt.Errorf("%w: fold session: %w", ErrInternal, err)
			a.h.log.Error("load session", "session", a.id, "err", err)
			return a.loadErr
		}
	}
	a.st, a.loadErr = st, nil
	return nil
}

// start0 starts the actor of a session with no events (Host.StartNew):
// its state is the empty fold, and a store that can is told the stream is
// new, so that neither reads it.
func (a *sessionActor) start0() {
	a.st, a.loadErr = NewSessionState(a.id), nil
	if ns, ok := a.h.cfg.Store.(events.NewStreamer); ok {
		ns.NewStream(a.stream)
	}
}

// eventBufs are the slices appends hand their events to the store in
// (storeEvents, putEvents).
var eventBufs = sync.Pool{New: func() any { return new([]events.Event) }}

// storeEvents returns the events of recs, in a pooled slice for putEvents.
func storeEvents(recs []record) *[]events.Event {
	bp := eventBufs.Get().(*[]events.Event)
	evs := (*bp)[:0]
	for i := range recs {
		evs = append(evs, recs[i].Event)
	}
	*bp = evs
	return bp
}

// putEvents gives a slice of storeEvents back, once the store has them (it
// keeps none of them).
func putEvents(bp *[]events.Event) {
	clear(*bp)
	*bp = (*bp)[:0]
	eventBufs.Put(bp)
}

// append writes recs in one append (all of them or none): see write.
func (a *sessionActor) append(recs ...record) error { return a.write(false, recs...) }

// write appends recs with the state's version as the expected version, all
// of them or none (steps false) or as steps (see appendSteps), applies
// what was stored, publishes it, and notifies the watchers of runs that
// settled. On a conflict it reloads the state from the stream.
func (a *sessionActor) write(steps bool, recs ...record) error {
	if len(recs) == 0 {
		return nil
	}
	if a.down {
		return ErrSessionOwned
	}
	if a.st == nil {
		return fmt.Errorf("%w: session state not loaded", ErrUnavailable)
	}
	p := a.pend
	if p != nil && !steps && len(recs) > 1 {
		// All or nothing cannot share a pipeline with other steps.
		if err := a.flushPending(); err != nil {
			return err
		}
		p = nil
	}
	var buf [2]runStatus
	before := buf[:0]
	if p != nil {
		a.pend = nil
		before = p.before
	}
	before = a.st.runStatuses(before, recs)
	if p != nil {
		return a.writeFused(p, before, steps, recs)
	}
	stream := a.stream
	bp := storeEvents(recs)
	defer putEvents(bp)
	evs := *bp
	ctx := a.store.get()
	var res events.AppendResult
	var err error
	var t0 time.Time
	if a.h.cfg.Observer != nil {
		t0 = time.Now()
	}
	if steps {
		res, err = events.AppendSteps(ctx, a.h.cfg.Store, stream, events.Exact(a.st.Version), evs...)
	} else {
		res, err = a.h.cfg.Store.Append(ctx, stream, events.Exact(a.st.Version), evs...)
	}
	if err != nil {
		if steps && res.LastVersion != 0 && res.FirstVersion == a.st.Version+1 {
			// A prefix of the steps is stored: the state takes it in (it
			// is a state advance carries on from), and the rest fails.
			n := int(res.LastVersion - res.FirstVersion + 1)
			if aerr := a.applyStored(stream, recs[:n], res); aerr != nil {
				return aerr
			}
			a.observe(recs[:n], time.Since(t0))
			a.h.publish(recs[:n])
		}
		if errors.Is(err, events.ErrWrongExpectedVersion) {
			err = a.standDownAfter(ctx, err)
		}
		a.h.log.Error("append", "session", a.id, "err", err)
		if errors.Is(err, events.ErrPayloadTooLarge) {
			a.failTooLarge(recs, err)
		}
		return err
	}
	if err := a.applyStored(stream, recs, res); err != nil {
		return err
	}
	a.observe(recs, time.Since(t0))
	a.h.publish(recs)
	a.settled(before)
	return nil
}

// standDownAfter handles an append the fence refused (err, a wrong
// expected version): another node appended and drives the session now.
// The actor reads the state it leaves from the stream, stands down and
// appends nothing more; it returns err wrapped in ErrSessionOwned.
func (a *sessionActor) standDownAfter(ctx context.Context, err error) error {
	if st, rerr := a.h.ReadSession(ctx, a.id); rerr == nil {
		a.st = st
	}
	a.down = true
	a.h.standDown(a.id, a.self)
	return fmt.Errorf("%w: %w", ErrSessionOwned, err)
}

// runStatus is a run's status before an append.
type runStatus struct {
	id string
	st RunStatus
}

// runStatuses adds to before the runs recs touch (almost always one) that
// it lacks, with their statuses now.
func (s *SessionState) runStatuses(before []runStatus, recs []record) []runStatus {
	for _, rec := range recs {
		if slices.ContainsFunc(before, func(b runStatus) bool { return b.id == rec.RunID }) {
			continue
		}
		b := runStatus{id: rec.RunID}
		if r := s.Runs[rec.RunID]; r != nil {
			b.st = r.Status
		}
		before = append(before, b)
	}
	return before
}

// settled acts on the runs of before whose status an append changed: it
// exits the toolsets of a run that ended and tells the watchers of a run
// that settled; it forgets the active run's memory once another run is
// active.
func (a *sessionActor) settled(before []runStatus) {
	for _, b := range before {
		r := a.st.Runs[b.id]
		if r != nil && r.Status != b.st && r.Status.Settled() {
			if o, ok := a.st.Outcome(b.id); ok {
				if m := a.run; r.Status.Ended() && m != nil && m.id == b.id && m.prepared {
					// Exit the run's toolsets first; the outcome is
					// notified once their reports are recorded.
					m.prepared = false
					tc := a.toolsetContext(m, r.Step)
					a.exits++
					a.h.system.Root.RequestWithCustomSender(a.life, &exitRequest{lcs: m.lcs, tc: tc, outcome: o}, a.self)
				} else {
					if r.Status.Ended() {
						a.h.forgetRun(b.id)
					}
					a.h.notify(o)
				}
			}
		}
	}
	if ar := a.st.ActiveRun(); a.run != nil && (ar == nil || ar.ID != a.run.id) {
		a.endRun(errRunCancelled)
	}
}

// failTooLarge fails the runs of recs, which the store refused as too
// large, so that none of them is left running (advance would build the
// same events again after every restart).
func (a *sessionActor) failTooLarge(recs []record, cause error) {
	if !slices.ContainsFunc(recs, func(r record) bool { return r.Type != events.TypeRunFailed }) {
		return // the refused append was only failures: nothing smaller to record
	}
	var done []string
	for _, rec := range recs {
		r := a.st.Runs[rec.RunID]
		if r == nil || r.Status.Ended() || slices.Contains(done, r.ID) {
			continue
		}
		done = append(done, r.ID)
		a.fail(r, FailPayloadTooLarge, fmt.Sprintf("the store refused the run's %s event as too large: %v", rec.Type, cause))
	}
}

// appendSteps appends recs, a sequence of which every prefix is a state
// advance can carry on from (it completes what is missing; see
// completion), with events.AppendSteps: in one round trip, not all or
// nothing, on a store that pipelines steps (JetStream); in one append
// otherwise.
func (a *sessionActor) appendSteps(recs ...record) error {
	return a.write(len(recs) > 1, recs...)
}

// applyStored applies recs, stored as res says, to the state: each gets
// the stream, version, blob reference and hash links the store gave its
// stored copy (events.Chain), so that the published events are the stored
// ones, and the state's head hash is the store's.
func (a *sessionActor) applyStored(stream string, recs []record, res events.AppendResult) error {
	for i := range recs {
		if i < len(res.Blobs) && res.Blobs[i] != nil {
			// Stored by reference: the record hashes as stored.
			recs[i].Blob = res.Blobs[i]
		}
		recs[i].Stream, recs[i].Version = stream, res.FirstVersion+uint64(i)
		recs[i].PrevHash = a.st.LastHash
		if i == len(recs)-1 {
			recs[i].Position = res.LastPosition
		}
		var hash string
		if i < len(res.Hashes) {
			hash = res.Hashes[i]
		}
		if err := a.st.applyHashed(recs[i], hash); err != nil {
			// The events are stored; the fold refusing them is a bug.
			a.h.log.Error("apply", "session", a.id, "err", err)
			return err
		}
	}
	return nil
}

// onExited records the closed reports of a run's toolsets, then tells the
// run's watchers how it ended.
func (a *sessionActor) onExited(m *exitedReply) {
	a.exits--
	var recs []record
	for _, rep := range m.reports {
		recs = append(recs, reportRecord(a.id, m.runID, rep, nil, nil, nil))
	}
	_ = a.appendSteps(recs...)
	if m.handoff {
		return // the run goes on with another agent
	}
	a.h.forgetRun(m.runID)
	o := m.outcome
	o.Version = a.st.Version
	a.h.notify(o)
}

// fail appends a run.failed event for run r.
func (a *sessionActor) fail(r *RunState, kind, msg string) {
	u := r.Usage
	_ = a.append(newRecord(events.TypeRunFailed, a.id, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: kind, Message: msg}, Usage: &u}))
}
