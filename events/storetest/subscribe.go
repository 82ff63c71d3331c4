package storetest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// follow consumes a subscription after the given position until it has
// collected n of this fixture's events, calling onEvent (if not nil) after
// each. It then appends a sentinel event and requires it to be the next
// event of the fixture's streams: nothing duplicated or left over follows
// the n events.
func (f *fixture) follow(after uint64, n int, onEvent func(count int)) ([]events.Event, error) {
	var (
		got      []events.Event
		sentinel = event(events.TypeRunCompleted, -1)
		sent     bool
		result   = errors.New("subscription ended without an error before the sentinel event")
	)
	if n == 0 {
		if _, err := f.s.Append(f.ctx, f.stream("sentinel"), events.Any, sentinel); err != nil {
			return nil, fmt.Errorf("append sentinel: %w", err)
		}
		sent = true
	}
	f.await("Subscribe", func() {
		for ev, err := range f.s.Subscribe(f.ctx, after) {
			if err != nil {
				result = fmt.Errorf("subscription ended after %d of %d events: %w", len(got), n, err)
				return
			}
			if !f.mine(ev) {
				continue
			}
			if sent {
				if ev.ID != sentinel.ID {
					result = fmt.Errorf("after the %d expected events, got %s (version %d of %q), want the sentinel event", n, ev.ID, ev.Version, ev.Stream)
				} else {
					result = nil
				}
				return
			}
			got = append(got, ev)
			if onEvent != nil {
				onEvent(len(got))
			}
			if len(got) == n {
				if _, err := f.s.Append(f.ctx, f.stream("sentinel"), events.Any, sentinel); err != nil {
					result = fmt.Errorf("append sentinel: %w", err)
					return
				}
				sent = true
			}
		}
	})
	return got, result
}

// testSubscribeCatchUpLive: a subscription from the start delivers the
// stored events and then those appended while it catches up, with no gap
// and no duplicate.
func testSubscribeCatchUpLive(f *fixture) {
	t := f.t
	const stored, live = 40, 40
	streams := []string{f.stream("a"), f.stream("b"), f.stream("c"), f.stream("d")}
	var want []uuid.UUID
	for i := 0; i < stored; {
		evs := eventsN(i, min(1+i%3, stored-i))
		f.mustAppend(streams[i%len(streams)], events.Any, evs...)
		want = append(want, ids(evs)...)
		i += len(evs)
	}
	liveEvs := eventsN(stored, live)
	want = append(want, ids(liveEvs)...)

	start := make(chan struct{})
	appended := make(chan error, 1)
	go func() {
		select {
		case <-start:
		case <-f.ctx.Done():
			appended <- f.ctx.Err()
			return
		}
		for i, ev := range liveEvs {
			if _, err := f.s.Append(f.ctx, streams[i%len(streams)], events.Any, ev); err != nil {
				appended <- fmt.Errorf("live append %d: %w", i, err)
				return
			}
		}
		appended <- nil
	}()

	got, err := f.follow(0, stored+live, func(count int) {
		if count == 1 {
			close(start) // append live events while the subscription catches up
		}
	})
	if len(got) == 0 {
		close(start)
	}
	if aerr := <-appended; aerr != nil {
		t.Errorf("appender: %v", aerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ids(got)); diff != "" {
		t.Errorf("subscription ids differ from append order (-want +got):\n%s", diff)
	}
	f.checkPositions("Subscribe", got)
}

// testSubscribeResume: a consumer that stops after k events and resumes
// after the k-th event's position gets exactly the rest.
func testSubscribeResume(f *fixture) {
	const total = 20
	for _, k := range []int{0, 1, 7, total - 1, total} {
		f.t.Run(fmt.Sprintf("after %d of %d", k, total), func(t *testing.T) {
			f := f.fresh(t)
			var want []uuid.UUID
			for i := 0; i < total; i += 2 {
				evs := eventsN(i, 2)
				f.mustAppend(f.stream(fmt.Sprint(i%3)), events.Any, evs[0])
				f.mustAppend(f.stream("x"), events.Any, evs[1])
				want = append(want, ids(evs)...)
			}

			var checkpoint uint64
			var first []events.Event
			if k > 0 {
				f.await("Subscribe", func() {
					for ev, err := range f.s.Subscribe(f.ctx, 0) {
						if err != nil {
							t.Errorf("first subscription after %d events: %v", len(first), err)
							return
						}
						if !f.mine(ev) {
							continue
						}
						first = append(first, ev)
						if len(first) == k {
							break
						}
					}
				})
				if len(first) != k {
					t.Fatalf("first subscription got %d events, want %d", len(first), k)
				}
				checkpoint = first[k-1].Position
			}
			if diff := cmp.Diff(want[:k], ids(first)); diff != "" {
				t.Errorf("first subscription (-want +got):\n%s", diff)
			}

			rest, err := f.follow(checkpoint, total-k, nil)
			if err != nil {
				t.Fatalf("resumed subscription: %v", err)
			}
			if diff := cmp.Diff(want[k:], ids(rest)); diff != "" {
				t.Errorf("resumed subscription after position %d (-want +got):\n%s", checkpoint, diff)
			}
		})
	}
}

// testSubscribeCancel: cancelling the context ends a subscription that
// waits for new events, with the context's error as its last element.
func testSubscribeCancel(f *fixture) {
	t := f.t
	f.mustAppend(f.stream("s"), events.NoStream, event(events.TypeToolProgress, 1))
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	var (
		last error
		n    int
	)
	f.await("cancelled Subscribe", func() {
		for ev, err := range f.s.Subscribe(ctx, 0) {
			last = err
			if err != nil {
				continue // must be the last element
			}
			if f.mine(ev) {
				if n++; n == 1 {
					// Cancel while the subscription is (about to be)
					// waiting for new events.
					go cancel()
				}
			}
		}
	})
	if n != 1 {
		t.Errorf("subscription delivered %d events, want 1", n)
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("last element of the cancelled subscription: %v, want context.Canceled", last)
	}
}

// testClose: Close ends live subscriptions with ErrClosed, every later call
// fails with ErrClosed, and Close is idempotent.
func testClose(f *fixture) {
	t := f.t
	stream := f.stream("s")
	f.mustAppend(stream, events.NoStream, event(events.TypeToolProgress, 1))

	received := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		var last error
		n := 0
		for ev, err := range f.s.Subscribe(f.ctx, 0) {
			last = err
			if err == nil && f.mine(ev) {
				if n++; n == 1 {
					close(received)
				}
			}
		}
		ended <- last
	}()
	wait := time.NewTimer(Timeout)
	defer wait.Stop()
	select {
	case <-received:
	case <-wait.C:
		t.Fatal("subscription did not deliver the stored event")
	}
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, events.ErrClosed) {
			t.Errorf("subscription ended by Close with %v, want ErrClosed", err)
		}
	case <-wait.C:
		t.Fatal("Close did not end the live subscription")
	}

	if _, err := f.s.Append(f.ctx, stream, events.Any, event(events.TypeToolProgress, 2)); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := f.s.ReadStream(f.ctx, stream, 0); !errors.Is(err, events.ErrClosed) {
		t.Errorf("ReadStream after Close: %v, want ErrClosed", err)
	}
	seqs := map[string]func() iter.Seq2[events.Event, error]{
		"ReadAll":   func() iter.Seq2[events.Event, error] { return f.s.ReadAll(f.ctx, 0) },
		"Subscribe": func() iter.Seq2[events.Event, error] { return f.s.Subscribe(f.ctx, 0) },
	}
	for name, seq := range seqs {
		var elems []error
		f.await(name+" after Close", func() {
			for _, err := range seq() {
				elems = append(elems, err)
			}
		})
		if len(elems) != 1 || !errors.Is(elems[0], events.ErrClosed) {
			t.Errorf("%s after Close yielded %v, want only ErrClosed", name, elems)
		}
	}
	if err := f.s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
