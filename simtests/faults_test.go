package simtests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
)

// sessionIDs returns n session ids for test name.
func sessionIDs(name string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", name, i+1)
	}
	return out
}

// each runs fn for every session, one session after the other, and fails
// the test on an error. (all runs them at once.)
func each(t *testing.T, ctx context.Context, sessions []string, fn func(ctx context.Context, s string) error) {
	t.Helper()
	for _, s := range sessions {
		if err := fn(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}

// all runs fn for every session at once and, once they have all
// returned, fails the test with the errors of those that failed.
func all(t *testing.T, ctx context.Context, sessions []string, fn func(ctx context.Context, s string) error) {
	t.Helper()
	forAll(t, ctx, sessions, func(ctx context.Context, s string) (struct{}, error) {
		return struct{}{}, fn(ctx, s)
	})
}

// forAll is all for a fn with a result: it returns the results by
// session.
func forAll[T any](t *testing.T, ctx context.Context, sessions []string, fn func(ctx context.Context, s string) (T, error)) map[string]T {
	t.Helper()
	res := make([]T, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() { res[i], errs[i] = fn(ctx, s) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]T, len(sessions))
	for i, s := range sessions {
		out[s] = res[i]
	}
	return out
}

// spread assigns sessions to the weft nodes in turn: a, b, a, ...
func spread(sessions []string) map[string]string {
	out := make(map[string]string, len(sessions))
	for i, s := range sessions {
		out[s] = []string{"a", "b"}[i%2]
	}
	return out
}

// spreadWaiting starts the demo runs of sessions at once, each on the
// node spread assigns it (so that both nodes drive some), and waits until
// every run waits for the deploy's approval on the node it was started
// on.
func (s *sim) spreadWaiting(sessions []string) {
	s.t.Helper()
	nodes := spread(sessions)
	all(s.t, s.ctx, sessions, func(ctx context.Context, id string) error {
		v, err := s.c.startRunOn(ctx, nodes[id], id)
		if err != nil {
			return err
		}
		_, err = s.c.await(ctx, id, events.TypeRunWaiting, v)
		return err
	})
	for _, id := range sessions {
		if o := s.owner(id); o != nodes[id] {
			s.t.Fatalf("session %s is driven by %s, want %s (it was started there)", id, o, nodes[id])
		}
	}
}

// approveAll approves the deploys of sessions at once and returns the
// session's version each approval reported.
func (s *sim) approveAll(sessions []string) map[string]uint64 {
	s.t.Helper()
	return forAll(s.t, s.ctx, sessions, s.c.approve)
}

// awaitAll waits at once until the run of each session settles as want
// (its stream holding at least version since[session]) and returns their
// events.
func (s *sim) awaitAll(sessions []string, want events.Type, since map[string]uint64) map[string][]events.Event {
	s.t.Helper()
	return forAll(s.t, s.ctx, sessions, func(ctx context.Context, id string) ([]events.Event, error) {
		return s.c.await(ctx, id, want, since[id])
	})
}

// toWaiting starts the demo run of s and waits until it waits for the
// deploy's approval.
func (s *sim) toWaiting(ctx context.Context, session string) error {
	v, err := s.c.startRun(ctx, session)
	if err != nil {
		return err
	}
	_, err = s.c.await(ctx, session, events.TypeRunWaiting, v)
	return err
}

// toCompleted approves the deploy of s and waits until the run completes.
func (s *sim) toCompleted(ctx context.Context, session string) error {
	v, err := s.c.approve(ctx, session)
	if err != nil {
		return err
	}
	_, err = s.c.await(ctx, session, events.TypeRunCompleted, v)
	return err
}

// snapshot reads the streams of sessions: their events are acknowledged.
func (s *sim) snapshot(sessions []string) map[string][]events.Event {
	s.t.Helper()
	out := map[string][]events.Event{}
	for _, id := range sessions {
		evs, err := s.c.read(s.ctx, id)
		if err != nil {
			s.t.Fatal(err)
		}
		out[id] = evs
	}
	return out
}

// owner returns the weft node holding session's lease; none is an error.
func (s *sim) owner(session string) string {
	s.t.Helper()
	o, err := s.c.owner(s.ctx, session)
	if err != nil {
		s.t.Fatal(err)
	}
	if s.nodes[o] == nil {
		s.t.Fatalf("session %s: lease held by %q, not by a weft node", session, o)
	}
	return o
}

// signalWorkers sends sig to every worker.
func (s *sim) signalWorkers(sig syscall.Signal) {
	for _, w := range s.workers {
		w.signal(sig)
	}
}

// midCall starts the demo run of session with the workers stopped
// (SIGSTOP), so that it stays in its first tool calls, and returns the
// node driving it once the calls are sent. The caller continues the
// workers within the call's re-delivery budget (MaxDeliveries heartbeat
// deadlines, 3 s).
func (s *sim) midCall(session string) string {
	s.t.Helper()
	s.signalWorkers(syscall.SIGSTOP)
	if _, err := s.c.startRun(s.ctx, session); err != nil {
		s.t.Fatal(err)
	}
	err := retry(s.ctx, func(ctx context.Context) error {
		evs, err := s.c.read(ctx, session)
		if err != nil {
			return err
		}
		started := 0
		for _, ev := range evs {
			switch ev.Type {
			case events.TypeToolStarted:
				started++
			case events.TypeToolReturned, events.TypeRunFailed:
				return backoffStop{fmt.Errorf("session %s: %s before the fault:%s", session, ev.Type, describe(evs))}
			}
		}
		if started < 2 {
			return fmt.Errorf("session %s: %d calls started", session, started)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return s.owner(session)
}

// The node driving sessions is killed (SIGKILL) while their runs wait for
// approval; the approvals, sent to the cluster, are served by the survivor
// once the dead node's leases expire, and every run completes.
func TestKillOwnerWhileWaiting(t *testing.T) {
	s := newHarness(t).startAll()
	ctx := s.ctx

	sessions := sessionIDs("kill-waiting", 6)
	each(t, ctx, sessions, s.toWaiting)
	owners := map[string][]string{}
	for _, id := range sessions {
		o := s.owner(id)
		owners[o] = append(owners[o], id)
	}
	victim := "a"
	if len(owners["b"]) > len(owners["a"]) {
		victim = "b"
	}
	t.Logf("owners before the kill: %v; killing %s", owners, victim)
	before := s.snapshot(sessions)
	s.nodes[victim].p.kill()

	each(t, ctx, sessions, s.toCompleted)
	for _, id := range owners[victim] {
		if o, err := s.c.owner(ctx, id); err != nil || o != s.other(victim) {
			t.Errorf("session %s is owned by %q after the takeover (%v)", id, o, err)
		}
	}
	s.c.checkLog(ctx, sessions, before)
}

// The node driving a run is killed while the run's tool calls are out; no
// command arrives for the session, yet the survivor takes it over (weft
// serve watches the lease bucket and takes over the sessions whose leases
// end), sends the calls again and carries
// the run on until it waits for approval; then it completes.
//
// With pooled workers, the calls wait in the pool stream while the
// workers are stopped; the survivor publishes them again into the stream,
// and every publish of a call must be stored: a message id the stream
// already holds (the victim's delivery) would be dropped as a duplicate.
func TestKillOwnerMidCall(t *testing.T) { forDispatches(t, testKillOwnerMidCall) }

func testKillOwnerMidCall(t *testing.T, d dispatch) {
	h := newHarness(t)
	h.pool = d.pool
	s := h.startAll()
	ctx := s.ctx
	session := "kill-mid-call"
	published := s.watchPublished(d)
	victim := s.midCall(session)
	before := s.snapshot([]string{session})
	s.nodes[victim].p.kill()
	s.signalWorkers(syscall.SIGCONT)

	if _, err := s.c.await(ctx, session, events.TypeRunWaiting, uint64(len(before[session]))); err != nil {
		t.Fatal(err)
	}
	if o := s.owner(session); o != s.other(victim) {
		t.Errorf("session %s is driven by %s after the takeover, want %s", session, o, s.other(victim))
	}
	if err := s.toCompleted(ctx, session); err != nil {
		t.Fatal(err)
	}
	s.c.checkLog(ctx, []string{session}, before)
	published.check(t)
}

// A NATS server is killed and started again on its store while runs resume
// and call their tools, once for each server in turn; every run completes,
// runs started after each restart complete, and no acknowledged event is
// lost.
//
// New sessions are started between the restarts, not during them: a
// session actor whose first read of its stream fails (JetStream
// unavailable while the server is down) refuses every later command with
// "load session" until its node restarts.
func TestRestartNATSNode(t *testing.T) {
	// The nodes run the demo tools locally (no workers): each call runs
	// on the node that drives its session, whichever of the two it is.
	h := newHarness(t)
	h.localTools = true
	s := h.startSim(func(*cluster) []*proc { return nil })
	ctx := s.ctx
	first, second := sessionIDs("nats-restart-a", 3), sessionIDs("nats-restart-b", 3)
	each(t, ctx, first, s.toWaiting)
	before := s.snapshot(first)

	for i := range s.nats.nodes {
		// A killed leader costs a raft election (4 to 9 s in
		// nats-server) before its stream takes writes again: the log
		// says which of the nodes' streams the server led.
		t.Logf("restarting %s, leader of %v", s.nats.nodes[i].name, s.c.ledBy(ctx, s.nats.nodes[i].name))
		restarted := make(chan error, 1)
		go func() { restarted <- s.nats.restart(i) }()
		// A run resumes and calls its tools while the server is down
		// and while it rejoins.
		each(t, ctx, first[i:i+1], s.toCompleted)
		if err := <-restarted; err != nil {
			t.Fatalf("restart %s: %v", s.nats.nodes[i].name, err)
		}
		each(t, ctx, second[i:i+1], s.toWaiting)
	}
	each(t, ctx, second, s.toCompleted)
	s.c.checkLog(ctx, append(first, second...), before)
}

// The node driving a run is stopped (SIGSTOP) past its lease TTL while the
// run's tool calls are out: the survivor takes the session over and the
// run completes. Continued (SIGCONT), the stopped node finds its lease
// gone and stands down: nothing it still had in flight forks the stream,
// and the cluster keeps serving runs on both nodes.
func TestStopOwnerPastLeaseTTL(t *testing.T) {
	s := newHarness(t).startAll()
	ctx := s.ctx
	session := "stop-owner"
	paused := s.midCall(session)
	before := s.snapshot([]string{session})
	s.nodes[paused].p.signal(syscall.SIGSTOP)
	s.signalWorkers(syscall.SIGCONT)

	if _, err := s.c.await(ctx, session, events.TypeRunWaiting, uint64(len(before[session]))); err != nil {
		t.Fatal(err)
	}
	survivor := s.other(paused)
	if o := s.owner(session); o != survivor {
		t.Fatalf("session %s is driven by %s, want %s", session, o, survivor)
	}
	if err := s.toCompleted(ctx, session); err != nil {
		t.Fatal(err)
	}
	s.nodes[paused].p.signal(syscall.SIGCONT)

	// The continued node's timers fire and late reports arrive: give it a
	// few lease TTLs to act on them (a standing-down node does nothing
	// visible, so there is no event to wait for).
	settle := time.NewTimer(3 * leaseTTL)
	select {
	case <-settle.C:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if o, err := s.c.owner(ctx, session); err != nil || o == paused {
		t.Errorf("session %s: lease held by %q after the paused node continued (%v)", session, o, err)
	}
	more := sessionIDs("stop-owner-after", 4)
	each(t, ctx, more, s.toWaiting)
	each(t, ctx, more, s.toCompleted)
	s.c.checkLog(ctx, append([]string{session}, more...), before)
}
