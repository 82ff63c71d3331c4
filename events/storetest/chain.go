package storetest

import (
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// checkChain reports where the chain of evs (a whole stream) is not the one
// the store must compute: PrevHash "" at version 1 and the Hash of the
// previous event after it.
func (f *fixture) checkChain(what string, evs []events.Event) {
	f.t.Helper()
	for i, ev := range evs {
		want := ""
		if i > 0 {
			want = events.Hash(evs[i-1])
		}
		if ev.PrevHash != want {
			f.t.Errorf("%s: event %d (version %d) PrevHash = %q, want %q", what, i, ev.Version, ev.PrevHash, want)
		}
	}
	if err := events.VerifyChain(evs); err != nil {
		f.t.Errorf("%s: VerifyChain: %v", what, err)
	}
}

// testHashChain: every backend chains each stream, across batches and each
// kind of expected version; streams are chained independently; a duplicate
// re-append does not disturb the chain; reads of the whole log carry the
// same PrevHash as stream reads.
func testHashChain(f *fixture) {
	t := f.t
	a, b := f.stream("chain-a"), f.stream("chain-b")
	batch := eventsN(0, 3)
	type appended struct {
		stream string
		res    events.AppendResult
	}
	var results []appended
	add := func(stream string, expected events.ExpectedVersion, evs ...events.Event) events.AppendResult {
		res := f.mustAppend(stream, expected, evs...)
		results = append(results, appended{stream, res})
		return res
	}
	add(a, events.NoStream, batch...)
	add(b, events.Any, eventsN(100, 2)...)
	add(a, events.Exact(3), eventsN(3, 1)...)
	add(a, events.Any, eventsN(4, 2)...)
	if res := add(a, events.Any, batch...); !res.Duplicate {
		t.Errorf("re-append of the first batch = %+v, want a duplicate", res)
	}
	add(b, events.Exact(2), eventsN(102, 1)...)

	gotA, gotB := f.readStream(a, 0), f.readStream(b, 0)
	if len(gotA) != 6 || len(gotB) != 3 {
		t.Fatalf("streams hold %d and %d events, want 6 and 3", len(gotA), len(gotB))
	}
	// Every append returned the hashes of the events it stored (for the
	// duplicate, of the stored ones), so that its caller need not hash.
	for i, ap := range results {
		stored := map[string][]events.Event{a: gotA, b: gotB}[ap.stream]
		var want []string
		for _, ev := range stored[ap.res.FirstVersion-1 : ap.res.LastVersion] {
			want = append(want, events.Hash(ev))
		}
		if diff := cmp.Diff(want, ap.res.Hashes); diff != "" {
			t.Errorf("append %d (%s, versions %d..%d): Hashes (-stored +returned):\n%s", i, ap.stream, ap.res.FirstVersion, ap.res.LastVersion, diff)
		}
	}
	f.checkChain("stream a", gotA)
	f.checkChain("stream b", gotB)
	if gotA[1].PrevHash == "" || gotA[1].PrevHash == gotB[1].PrevHash {
		t.Errorf("second events of two streams have PrevHash %q and %q, want distinct, non-empty hashes", gotA[1].PrevHash, gotB[1].PrevHash)
	}

	// A read from the middle carries the same links.
	if tail := f.readStream(a, 4); len(tail) != 3 || tail[0].PrevHash != gotA[3].PrevHash {
		t.Errorf("ReadStream from version 4: %d events, first PrevHash %q, want 3 events from PrevHash %q", len(tail), first(tail).PrevHash, gotA[3].PrevHash)
	}
	byStream := map[string][]events.Event{}
	for _, ev := range f.readAll(0) {
		byStream[ev.Stream] = append(byStream[ev.Stream], ev)
	}
	f.checkChain("ReadAll stream a", byStream[a])
	f.checkChain("ReadAll stream b", byStream[b])
}

// testHashChainRace: appenders racing with Any on one stream still leave a
// single intact chain (each append chains from the head it was checked
// against, so a lost race re-reads the head).
func testHashChainRace(f *fixture) {
	t := f.t
	stream := f.stream("chain-race")
	n := f.opts.Concurrency
	const perAppender = 4
	var (
		wg   sync.WaitGroup
		errs = make(chan error, n)
		mu   sync.Mutex
		ids  []uuid.UUID
	)
	for a := range n {
		wg.Go(func() {
			for i := range perAppender {
				evs := eventsN(a*perAppender*2+i*2, 1+i%2)
				if _, err := f.s.Append(f.ctx, stream, events.Any, evs...); err != nil {
					errs <- fmt.Errorf("appender %d: %w", a, err)
					return
				}
				mu.Lock()
				for _, ev := range evs {
					ids = append(ids, ev.ID)
				}
				mu.Unlock()
			}
		})
	}
	f.await("racing appenders", wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	got := f.readStream(stream, 0)
	if len(got) != len(ids) {
		t.Fatalf("stream holds %d events, want %d", len(got), len(ids))
	}
	f.checkChain("racing appenders", got)
}

// testKeyedChain: a store given chain keys keys every event it appends,
// across batches, expected versions and a duplicate re-append, ignoring a
// key id or MAC the caller set; the whole log verifies with the keys, and
// an event forged with the right prev_hash but without the key does not.
func testKeyedChain(f *fixture) {
	t, keys := f.t, f.opts.ChainKeys
	a, b := f.stream("keyed-a"), f.stream("keyed-b")
	batch := eventsN(0, 3)
	for i := range batch {
		batch[i].KeyID, batch[i].MAC = "forged", "forged"
	}
	f.mustAppend(a, events.NoStream, batch...)
	f.mustAppend(b, events.Any, eventsN(100, 1)...)
	f.mustAppend(a, events.Exact(3), eventsN(3, 2)...)
	f.mustAppend(a, events.Any, batch...) // a duplicate
	gotA := f.readStream(a, 0)
	for _, ev := range gotA {
		if ev.KeyID != keys.Current().ID() || ev.MAC != keys.Current().MAC(ev) {
			t.Errorf("event %d of stream a: key id %q, MAC %q, want the MAC under the current key %s", ev.Version, ev.KeyID, ev.MAC, keys.Current().ID())
		}
	}
	var log []events.Event
	for _, ev := range f.readAll(0) {
		if ev.Stream == a || ev.Stream == b {
			log = append(log, ev)
		}
	}
	seq := func(evs []events.Event) iter.Seq2[events.Event, error] {
		return func(yield func(events.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
	res, err := events.VerifyStreams(seq(log), events.VerifyOptions{Keys: keys})
	if err != nil || res.Events != 6 || res.Unkeyed != 0 {
		t.Errorf("the keyed log verified with its keys = %+v, %v; want 6 keyed events", res, err)
	}
	forged := eventsN(9, 1)[0]
	forged.Stream, forged.Version, forged.PrevHash = a, 6, events.Hash(gotA[4])
	if _, err := events.VerifyStreams(seq(append(log, forged)), events.VerifyOptions{Keys: keys}); !errors.Is(err, events.ErrBrokenChain) {
		t.Errorf("a forged event with the right prev_hash verified: %v", err)
	}
}
