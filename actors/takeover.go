package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// ErrNoLeases is returned by WatchLeases on a host without leases (a single
// node: HostConfig.Leases nil).
var ErrNoLeases = errors.New("actors: the host has no leases")

const (
	// takeoverWorkers bounds the sessions whose takeover WatchLeases
	// checks at once (a node that dies ends many leases together).
	takeoverWorkers = 8
	// takeoverAttempts bounds the attempts to check one ended lease when
	// the store or the lease bucket fails.
	takeoverAttempts = 5
)

// WatchLeases takes over the running sessions of the nodes that stop
// driving them, as their leases end, until ctx ends or the host closes. It
// blocks; run it in a goroutine of its own. It returns nil when ctx ends or
// the host closes, ErrNoLeases on a host without leases, and an error when
// the watch cannot be kept (the NATS connection closed).
//
// It watches the lease bucket. A lease ends when its node releases it (a
// clean stop: a delete) or when it expires a TTL after its last renewal
// (the node died or paused). With limit markers (see NewLeases) the server
// reports an expiry with a delete marker; without them the watcher times
// every lease from its last write and asks the bucket whether it is gone
// once its TTL has passed. For each ended lease of a session this node does
// not drive, it reads that session's stream only (never the whole log) and,
// if the session's last run is running, takes the lease (create-if-absent:
// of the nodes racing for it, one wins) and carries the run on, exactly as
// Recover does. A waiting session is not taken: the next command takes it.
//
// The watch starts with the bucket's current keys, so a lease that ended
// shortly before (its delete or expiry marker is still in the bucket) is
// looked at too. Leases that ended earlier, while no node watched, are
// Recover's: call Recover once when the node starts, then WatchLeases.
//
// taken (which may be nil) is called with the id of each session this node
// takes over, on the watching goroutine, one call at a time: it must not
// block.
func (h *Host) WatchLeases(ctx context.Context, taken func(sessionID string)) error {
	l := h.cfg.Leases
	if l == nil {
		return ErrNoLeases
	}
	ctx, cancel := context.WithCancel(ctx)
	// Close stops the renewals (stopOwnership): the watch stops with them.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-h.own.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	w := &leaseWatch{h: h, l: l, taken: taken,
		keys: map[string]*keyState{}, busy: map[string]bool{},
		done: make(chan checked), sem: make(chan struct{}, takeoverWorkers)}
	err := w.run(ctx)
	cancel()
	w.wg.Wait()
	<-stopped
	return err
}

// leaseWatch is the state of one WatchLeases call. Its maps belong to the
// watching goroutine; the checks run in goroutines of their own and report
// on done.
type leaseWatch struct {
	h     *Host
	l     *Leases
	taken func(string)

	keys map[string]*keyState // lease key → what the watch saw of it last
	busy map[string]bool      // lease key → a check runs (true: check again after it)
	done chan checked
	sem  chan struct{} // takeoverWorkers slots
	wg   sync.WaitGroup
}

// keyState is what the watch saw of a lease key last.
type keyState struct {
	rev uint64
	// due is when the lease expires unless renewed (without limit
	// markers: when the watcher asks the bucket), or, once ended, when
	// the watch forgets the key.
	due time.Time
	// ended is set once the lease's end was handled: the expiry marker
	// of its delete marker is not a new end.
	ended bool
}

// checked is the report of one check of an ended lease.
type checked struct {
	key, session string
	// rev is the revision whose expiry the check confirmed (without limit
	// markers), 0 for an end the bucket reported.
	rev  uint64
	gone bool // the check found the lease ended
	took bool // this node took the session over
}

// run watches the bucket until ctx ends, watching again after a failure
// unless the connection is closed.
func (w *leaseWatch) run(ctx context.Context) error {
	for {
		err := w.watch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if w.h.cfg.Conn.IsClosed() {
			return fmt.Errorf("watch leases: %w", err)
		}
		w.h.log.Warn("watch leases", "err", err)
		t := time.NewTimer(w.l.TTL() / 2)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// watch runs one watch of the bucket: its current keys, then every
// change, until ctx ends or the watch fails.
func (w *leaseWatch) watch(ctx context.Context) error {
	kw, err := w.l.kv.WatchAll(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = kw.Stop() }()
	var tick <-chan time.Time
	if !w.l.markers {
		t := time.NewTicker(w.l.TTL() / 4)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-kw.Updates():
			if !ok {
				return errors.New("the watch ended")
			}
			if e != nil { // nil: the current keys have all been delivered
				w.entry(ctx, e)
			}
		case c := <-w.done:
			w.finished(ctx, c)
		case now := <-tick:
			w.expire(ctx, now)
		}
	}
}

// entry notes a change of a lease key; a delete or an expiry marker ends
// the lease.
func (w *leaseWatch) entry(ctx context.Context, e jetstream.KeyValueEntry) {
	key := e.Key()
	switch e.Operation() {
	case jetstream.KeyValuePut:
		w.keys[key] = &keyState{rev: e.Revision(), due: e.Created().Add(w.l.TTL())}
		return
	case jetstream.KeyValueDelete, jetstream.KeyValuePurge:
	default:
		return
	}
	prev := w.keys[key]
	if e.Operation() == jetstream.KeyValuePurge {
		delete(w.keys, key) // an expiry marker: the key is gone
	} else {
		w.keys[key] = &keyState{rev: e.Revision(), due: e.Created().Add(w.l.TTL()), ended: true}
	}
	if prev != nil && prev.ended {
		return // the delete marker of a released lease expired
	}
	w.check(ctx, key, 0)
}

// expire (without limit markers) checks the leases whose TTL has passed
// since their last write, and forgets the ended ones.
func (w *leaseWatch) expire(ctx context.Context, now time.Time) {
	for key, st := range w.keys {
		switch {
		case now.Before(st.due):
		case st.ended:
			delete(w.keys, key)
		default:
			if _, busy := w.busy[key]; busy {
				continue
			}
			// Ask again later unless the lease is renewed meanwhile (the
			// server expires it a little after its TTL).
			st.due = now.Add(w.l.TTL() / 4)
			w.check(ctx, key, st.rev)
		}
	}
}

// check starts the check of the lease key: when rev is not 0, whether the
// lease written at rev has expired; then whether to take its session over.
func (w *leaseWatch) check(ctx context.Context, key string, rev uint64) {
	if _, busy := w.busy[key]; busy {
		if rev == 0 {
			w.busy[key] = true // an end while a check runs: check again after it
		}
		return
	}
	session, err := sessionOfKey(key)
	if err != nil {
		w.h.log.Warn("watch leases: a key that is no lease", "key", key, "err", err)
		return
	}
	w.busy[key] = false
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		select {
		case w.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		c := w.takeOver(ctx, key, session, rev)
		<-w.sem
		select {
		case w.done <- c:
		case <-ctx.Done():
		}
	}()
}

// finished handles the report of a check.
func (w *leaseWatch) finished(ctx context.Context, c checked) {
	again := w.busy[c.key]
	delete(w.busy, c.key)
	if st := w.keys[c.key]; c.rev != 0 && c.gone && st != nil && st.rev == c.rev {
		delete(w.keys, c.key)
	}
	if o := w.h.cfg.Observer; c.took && o != nil {
		o.TookOver(c.session)
	}
	if c.took && w.taken != nil {
		w.taken(c.session)
	}
	if again {
		w.check(ctx, c.key, 0)
	}
}

// takeOver checks one lease: that it has ended (rev != 0), then whether
// its session's run is running, and carries it on.
func (w *leaseWatch) takeOver(ctx context.Context, key, session string, rev uint64) checked {
	c := checked{key: key, session: session, rev: rev}
	if rev != 0 {
		gctx, cancel := context.WithTimeout(ctx, leaseTimeout)
		_, err := w.l.kv.Get(gctx, key)
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			if ctx.Err() == nil {
				w.h.log.Warn("watch leases: read lease", "session", session, "err", err)
			}
			return c // the next tick asks again
		default:
			return c // not expired yet, or renewed
		}
	}
	c.gone = true
	if w.h.Drives(session) {
		// This node's own lease ended (a pause): its renewals take it
		// back, or stand the session down if another node took it.
		return c
	}
	// Exponential backoff with jitter, so that the nodes trying to take
	// over the sessions of one dead node spread out.
	attempt := 0
	policy := &backoff.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, RandomizationFactor: 0.5,
		Multiplier: 2, MaxInterval: w.l.TTL()}
	took, err := backoff.Retry(ctx, func() (bool, error) {
		attempt++
		took, err := w.h.takeOver(ctx, session)
		if err != nil && ctx.Err() == nil {
			w.h.log.Warn("take over session", "session", session, "attempt", attempt, "err", err)
		}
		return took, err
	}, backoff.WithBackOff(policy), backoff.WithMaxTries(takeoverAttempts), backoff.WithMaxElapsedTime(0))
	if err == nil {
		c.took = took
	}
	// Otherwise the next command for the session, or a Recover, carries
	// it on.
	return c
}

// takeOver carries session id on if its last run is running (Recover's
// rule), reading the session's stream only. It returns whether this node
// took the session (false: not running, or another node took it first).
func (h *Host) takeOver(ctx context.Context, id string) (bool, error) {
	rctx, cancel := context.WithTimeout(ctx, storeTimeout)
	evs, err := h.cfg.Store.ReadStream(rctx, events.SessionStream(id), 0)
	cancel()
	if errors.Is(err, events.ErrStreamNotFound) {
		return false, nil // leased, but nothing recorded
	}
	if err != nil {
		return false, fmt.Errorf("read session %q: %w", id, err)
	}
	running := false
	for _, ev := range evs {
		running = stillRunning(running, ev.Type)
	}
	if !running {
		return false, nil
	}
	lctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	return h.carryOn(lctx, id)
}
