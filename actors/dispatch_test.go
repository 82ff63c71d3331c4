package actors

import (
	"sync/atomic"
	"testing"
	"time"
)

// A mailbox run that blocks does not hold up another: the second run gets
// a goroutine of its own.
func TestDispatcherBlockedRunHoldsNoOtherUp(t *testing.T) {
	d := newDispatcher()
	defer d.close()
	release, second := make(chan struct{}), make(chan struct{})
	d.Schedule(func() { <-release })
	d.Schedule(func() { close(second) })
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("the second run waited for the blocked one")
	}
	close(release)
}

// Runs scheduled one after another reuse an idle goroutine; idle
// goroutines exit after idleFor, and at once when the dispatcher closes.
func TestDispatcherReusesAndRetiresGoroutines(t *testing.T) {
	d := newDispatcher()
	d.idleFor = 200 * time.Millisecond
	var ran atomic.Int32
	for range 50 {
		done := make(chan struct{})
		d.Schedule(func() { ran.Add(1); close(done) })
		<-done
		// Let the goroutine reach its idle wait before the next run.
		eventually(t, "the goroutine to go idle", func() bool { return d.waiting.Load() >= 1 })
		time.Sleep(time.Millisecond)
	}
	if got := ran.Load(); got != 50 {
		t.Fatalf("ran %d runs, want 50", got)
	}
	// Each run finds the previous one's goroutine idle (a few may not,
	// on a loaded machine, if it is between its idle count and its wait).
	if n := d.started.Load(); n > 10 {
		t.Errorf("%d goroutines started for 50 runs one after another, want them reused", n)
	}
	eventually(t, "the idle goroutines to exit after idleFor", func() bool { return d.live.Load() == 0 })

	d = newDispatcher()
	for range 3 {
		d.Schedule(func() {})
	}
	eventually(t, "the runs", func() bool { return d.live.Load() > 0 })
	d.close()
	eventually(t, "the idle goroutines to exit on close", func() bool { return d.live.Load() == 0 })
	done := make(chan struct{})
	d.Schedule(func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a run scheduled after close did not run")
	}
	eventually(t, "the goroutine of a run after close to exit", func() bool { return d.live.Load() == 0 })
}
