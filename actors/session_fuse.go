package actors

import (
	"errors"
	"sync"
	"time"

	"github.com/weft-run/weft/events"
)

// Fused appends. A decision that only appends and carries on (run.started
// of a start, the tool events of a finished call) is applied to the state
// at once and its append is held: the next decision's events go in the
// same append (events.AppendSteps, one round trip on JetStream) — for a
// one-call run, run.started with the first model.request and a call's
// tool.started and tool.returned with the next model.request. Nothing that
// leaves the actor happens before the held events are stored: every
// effect other than a preparation in place (loose tools) appends them
// first, a command's answer included, and so does the end of every
// message the actor handles.
//
// Only decisions whose every prefix is a state the actor carries on from
// are held (split ones, or of one event), so that a pipeline that stores
// a prefix only leaves such a state; an all-or-nothing append of several
// events is never fused. When the fused append fails, the held events may
// be stored in part or not at all: the actor reads its stream again
// (rebuilding the state as recovery does; see pending.failed) and answers
// the held commands with the error. A start answered with an error is
// retried by its caller with its run id, which is idempotent.

// pendingAppend is what the actor applied ahead of its append.
type pendingAppend struct {
	recs   []record
	before []runStatus // the runs recs touch, with their statuses before
	base   uint64      // the state's version before recs
	// baseHash is the state's head hash before recs.
	baseHash string
	// replies answer commands once recs are stored.
	replies []pendingReply
}

// pendings are the host processes' pendingAppends, reused (see hold).
var pendings = sync.Pool{New: func() any { return new(pendingAppend) }}

type pendingReply struct {
	cmd *command
	e   effReply
	// version is the session's version after the command's own events:
	// its answer, whatever was fused after them.
	version uint64
}

// fusable reports whether decision d may be applied ahead of its append
// and fused with the next one's (see above).
func (a *sessionActor) fusable(d decision) bool {
	if !d.carryOn || d.queue || len(d.recs) == 0 || a.down || a.st == nil || (!d.split && len(d.recs) > 1) {
		return false
	}
	for i := range d.effects.len() {
		e := d.effects.at(i)
		if _, ok := e.(effReply); !ok {
			return false
		}
	}
	return true
}

// inPlace reports whether effect e may be performed while events are
// held: a preparation of a run of loose tools, built in the actor.
func (a *sessionActor) inPlace(e effect) bool {
	p, ok := e.(effPrepare)
	return ok && a.run != nil && a.run.id == p.run && len(a.run.lcs) == 0
}

// hold applies the events of decision d (fusable) to the state ahead of
// their append, and keeps its answers for when they are stored.
func (a *sessionActor) hold(d decision, cmd *command) error {
	p := a.pend
	if p == nil {
		// From the host's pool (writeFused puts it back): a session of
		// one run holds a few times, and its actor may be new.
		p = pendings.Get().(*pendingAppend)
		*p = pendingAppend{base: a.st.Version, baseHash: a.st.LastHash,
			recs: p.recs[:0], before: p.before[:0], replies: p.replies[:0]}
	}
	p.before = a.st.runStatuses(p.before, d.recs)
	for i := range d.recs {
		// The hash is the store's, given at the append (writeFused).
		if err := a.st.applyHashed(d.recs[i], "pending"); err != nil {
			a.h.log.Error("apply", "session", a.id, "err", err)
			a.pend = nil
			return a.reloadAfter(p, err, events.AppendResult{}, nil, 0)
		}
	}
	p.recs = append(p.recs, d.recs...)
	for i := range d.effects.len() {
		e := d.effects.at(i)
		p.replies = append(p.replies, pendingReply{cmd: cmd, e: e.(effReply), version: a.st.Version})
	}
	a.pend = p
	return nil
}

// flushPending appends the held events, if any.
func (a *sessionActor) flushPending() error {
	p := a.pend
	if p == nil {
		return nil
	}
	a.pend = nil
	return a.writeFused(p, p.before, false, nil)
}

// writeFused appends the held events of p and then recs (steps: every
// prefix is a state the actor carries on from) in one AppendSteps, at the
// version before p; it gives the held events what the store gave their
// copies, applies recs, publishes them all and answers p's commands.
func (a *sessionActor) writeFused(p *pendingAppend, before []runStatus, steps bool, recs []record) error {
	defer func() {
		if p == nil {
			return // the call below that took p back put it back
		}
		clear(p.recs[:cap(p.recs)]) // let the records' data go
		clear(p.replies[:cap(p.replies)])
		pendings.Put(p)
	}()
	n := len(p.recs)
	all := append(p.recs, recs...)
	p.recs = all
	bp := storeEvents(all)
	var t0 time.Time
	if a.h.cfg.Observer != nil {
		t0 = time.Now()
	}
	res, err := events.AppendSteps(a.store.get(), a.h.cfg.Store, a.stream, events.Exact(p.base), (*bp)...)
	putEvents(bp)
	if err != nil {
		if len(recs) > 0 && res.LastVersion == 0 && errors.Is(err, events.ErrPayloadTooLarge) {
			// The store refused them all for one too large, maybe one of
			// recs: the held events go alone, then recs as they would
			// have without fusing (failTooLarge names the right one).
			p.recs = all[:n]
			q := p
			p = nil // that call puts it back, even if it panics
			err := a.writeFused(q, q.before, false, nil)
			if err != nil {
				return err
			}
			return a.write(steps, recs...)
		}
		return a.reloadAfter(p, err, res, all, time.Since(t0))
	}
	a.st.LastHash = stampHeld(a.stream, all[:n], res, p.baseHash, len(recs) == 0)
	rest := res
	rest.FirstVersion += uint64(n)
	rest.Hashes, rest.Blobs = tail(rest.Hashes, n), tail(rest.Blobs, n)
	if err := a.applyStored(a.stream, all[n:], rest); err != nil {
		return err
	}
	a.observe(all, time.Since(t0))
	a.h.publish(all)
	for _, r := range p.replies {
		if r.cmd != nil && r.e.err == nil {
			r.cmd.answer(CommandReply{RunID: r.e.runID, Version: r.version})
			continue
		}
		a.reply(r.cmd, r.e)
	}
	a.settled(before)
	return nil
}

func tail[T any](s []T, n int) []T {
	if len(s) > n {
		return s[n:]
	}
	return nil
}

// stampHeld gives the held records recs, stored first in res after the
// event whose hash is prev, the stream, version, blob reference, previous
// hash (and, when last, position) their stored copies have, and returns
// the hash of the last.
func stampHeld(stream string, recs []record, res events.AppendResult, prev string, last bool) string {
	for i := range recs {
		if i < len(res.Blobs) && res.Blobs[i] != nil {
			recs[i].Blob = res.Blobs[i]
		}
		recs[i].Stream, recs[i].Version, recs[i].PrevHash = stream, res.FirstVersion+uint64(i), prev
		if i < len(res.Hashes) {
			prev = res.Hashes[i]
		} else {
			prev = events.Hash(recs[i].Event)
		}
	}
	if last && len(recs) > 0 {
		recs[len(recs)-1].Position = res.LastPosition
	}
	return prev
}

// reloadAfter handles a failed fused append (or a held event the fold
// refused, a bug): the state, which took in the held events, is read again
// from the stream (a failed read leaves the actor unloaded: the next
// command reads again); the prefix the store kept, if any, is published;
// the held commands are answered with the error, which it returns.
func (a *sessionActor) reloadAfter(p *pendingAppend, err error, res events.AppendResult, all []record, took time.Duration) error {
	if res.LastVersion != 0 && res.FirstVersion == p.base+1 && int(res.LastVersion-res.FirstVersion) < len(all) {
		n := int(res.LastVersion - res.FirstVersion + 1)
		stampHeld(a.stream, all[:n], res, p.baseHash, true)
		a.observe(all[:n], took)
		a.h.publish(all[:n])
	}
	if errors.Is(err, events.ErrWrongExpectedVersion) {
		err = a.standDownAfter(a.store.get(), err)
	} else {
		a.st = nil
		_ = a.load()
	}
	a.h.log.Error("append", "session", a.id, "err", err)
	if a.st != nil && !a.down {
		if errors.Is(err, events.ErrPayloadTooLarge) {
			a.failTooLarge(all, err)
		}
		if ar := a.st.ActiveRun(); a.run != nil && (ar == nil || ar.ID != a.run.id) {
			a.endRun(errRunCancelled)
		}
	}
	for _, r := range p.replies {
		a.reply(r.cmd, effReply{err: err})
	}
	return err
}

// replyFailed answers cmd, if decision d answers it, with err: its events
// were not appended.
func (a *sessionActor) replyFailed(d decision, cmd *command, err error) {
	for i := range d.effects.len() {
		e := d.effects.at(i)
		if _, ok := e.(effReply); ok {
			a.reply(cmd, effReply{err: err})
		}
	}
}

// flushHeld appends the held events at the end of a message: they never
// wait for the next one.
func (a *sessionActor) flushHeld() {
	if a.pend != nil {
		_ = a.flushPending()
	}
}
