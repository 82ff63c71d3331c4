package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// testSteps: events.AppendSteps (the store's own when it is an
// events.StepAppender, else Append) appends in order at consecutive
// versions, chained, with the hashes in its result; refuses a wrong
// expected version writing nothing; and recognises a re-append.
func testSteps(f *fixture) {
	t := f.t
	stream := f.stream("steps")
	f.mustAppend(stream, events.NoStream, eventsN(1, 1)...)
	evs := eventsN(2, 3)
	res, err := events.AppendSteps(f.ctx, f.s, stream, events.Exact(1), evs...)
	if err != nil {
		t.Fatalf("AppendSteps: %v", err)
	}
	got := f.readStream(stream, 0)
	if len(got) != 4 || res.FirstVersion != 2 || res.LastVersion != 4 || res.LastPosition != got[3].Position || res.Duplicate {
		t.Fatalf("AppendSteps = %+v; stream holds %d events", res, len(got))
	}
	if diff := cmp.Diff(ids(evs), ids(got[1:])); diff != "" {
		t.Errorf("stored ids (-appended +stored):\n%s", diff)
	}
	f.checkChain("stream after AppendSteps", got)
	if diff := cmp.Diff(events.StoredHashes(got[1:]), res.Hashes); diff != "" {
		t.Errorf("AppendSteps Hashes (-stored +returned):\n%s", diff)
	}

	if _, err := events.AppendSteps(f.ctx, f.s, stream, events.Exact(2), eventsN(9, 2)...); !errors.Is(err, events.ErrWrongExpectedVersion) {
		t.Errorf("AppendSteps at a stale version: %v, want ErrWrongExpectedVersion", err)
	}
	dup, err := events.AppendSteps(f.ctx, f.s, stream, events.Exact(1), evs...)
	if err != nil || !dup.Duplicate || dup.FirstVersion != 2 || dup.LastVersion != 4 {
		t.Errorf("AppendSteps re-append = %+v, %v; want the original versions, a duplicate", dup, err)
	}
	if n := len(f.readStream(stream, 0)); n != 4 {
		t.Errorf("stream holds %d events after the refused and repeated appends, want 4", n)
	}
}

// testConcurrentSteps: appenders of three-event steps race on one stream
// at exact versions, each carrying on with what is left of its step after
// a conflict: no version is taken twice, no event is stored twice or
// lost, each appender's events keep their order, and the chain is intact.
// Two writers cannot fork a stream, whichever way their steps interleave.
func testConcurrentSteps(f *fixture) {
	t := f.t
	const steps, size = 3, 3
	stream := f.stream("steps-contended")
	n := f.opts.Concurrency
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		mine = map[uuid.UUID]int{} // event id → appender
		errs = make(chan error, n)
	)
	for a := range n {
		wg.Go(func() {
			for s := range steps {
				step := eventsN(1000*a+10*s, size)
				mu.Lock()
				for _, ev := range step {
					mine[ev.ID] = a
				}
				mu.Unlock()
				for len(step) > 0 {
					evs, err := f.s.ReadStream(f.ctx, stream, 0)
					if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
						errs <- fmt.Errorf("appender %d: read: %w", a, err)
						return
					}
					res, err := events.AppendSteps(f.ctx, f.s, stream, events.Exact(uint64(len(evs))), step...)
					if res.LastVersion != 0 {
						step = step[res.LastVersion-res.FirstVersion+1:]
					}
					if err != nil && !errors.Is(err, events.ErrWrongExpectedVersion) {
						errs <- fmt.Errorf("appender %d: AppendSteps: %w", a, err)
						return
					}
				}
			}
		})
	}
	f.await("concurrent step appenders", wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := f.readStream(stream, 0)
	if len(got) != n*steps*size {
		t.Fatalf("stream holds %d events, want %d", len(got), n*steps*size)
	}
	seen := map[uuid.UUID]bool{}
	order := make([][]uuid.UUID, n)
	for i, ev := range got {
		a, ok := mine[ev.ID]
		switch {
		case ev.Version != uint64(i+1):
			t.Errorf("event %d has version %d", i, ev.Version)
		case !ok || seen[ev.ID]:
			t.Errorf("event %s at version %d is not an appender's, or stored twice", ev.ID, ev.Version)
		}
		seen[ev.ID] = true
		order[a] = append(order[a], ev.ID)
	}
	for a, got := range order {
		want := slices.Clone(got)
		slices.SortFunc(want, compareUUID) // UUIDv7s: the order they were made in
		if !slices.Equal(want, got) {
			t.Errorf("appender %d's events are stored out of order", a)
		}
	}
	f.checkChain("contended stream", got)
}
