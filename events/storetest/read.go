package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// testGlobalOrder: ReadAll returns events of all streams in append order
// with strictly increasing positions, and ReadAll(after=p) starts right
// after p.
func testGlobalOrder(f *fixture) {
	t := f.t
	streams := []string{f.stream("a"), f.stream("b"), f.stream("c")}
	var (
		want     []uuid.UUID
		lastPos  = map[uuid.UUID]uint64{} // last event of each append → its LastPosition
		versions = map[string]uint64{}
	)
	for i := range 24 {
		stream := streams[i%len(streams)]
		evs := eventsN(i*10, 1+i%4/3) // every fourth append is a batch of 2
		res := f.mustAppend(stream, events.Exact(versions[stream]), evs...)
		versions[stream] = res.LastVersion
		want = append(want, ids(evs)...)
		lastPos[evs[len(evs)-1].ID] = res.LastPosition
	}

	all := f.readAll(0)
	if diff := cmp.Diff(want, ids(all)); diff != "" {
		t.Fatalf("ReadAll(0) ids differ from append order (-want +got):\n%s", diff)
	}
	f.checkPositions("ReadAll", all)
	seen := map[string]uint64{}
	for _, ev := range all {
		seen[ev.Stream]++
		if ev.Version != seen[ev.Stream] {
			t.Errorf("event %s of %q has version %d, want %d", ev.ID, ev.Stream, ev.Version, seen[ev.Stream])
		}
		if p, ok := lastPos[ev.ID]; ok && p != ev.Position {
			t.Errorf("event %s: Append reported LastPosition %d, ReadAll says %d", ev.ID, p, ev.Position)
		}
	}

	for _, k := range []int{1, 2, 10, len(all) - 1, len(all)} {
		after := all[k-1].Position
		if diff := cmp.Diff(want[k:], ids(f.readAll(after))); diff != "" {
			t.Errorf("ReadAll(after position of event %d) (-want +got):\n%s", k, diff)
		}
	}

	// Breaking out of the loop stops the read (a backend that keeps
	// yielding makes the range statement panic).
	n := 0
	for _, err := range f.s.ReadAll(f.ctx, 0) {
		if err != nil {
			t.Fatalf("ReadAll: %v", err)
		}
		if n++; n == 3 {
			break
		}
	}
}

// testReadStreamFrom: ReadStream returns the events from a version on.
func testReadStreamFrom(f *fixture) {
	t := f.t
	stream, other := f.stream("s"), f.stream("other")
	var want []uuid.UUID
	for size := 1; size <= 4; size++ {
		evs := eventsN(len(want), size)
		f.mustAppend(stream, events.Any, evs...)
		f.mustAppend(other, events.Any, event(events.TypeToolProgress, size))
		want = append(want, ids(evs)...)
	}
	cases := []struct {
		name  string
		from  uint64
		first int // index into want of the first event returned
	}{
		{"from zero", 0, 0},
		{"from one", 1, 0},
		{"from two", 2, 1},
		{"from the middle of a batch", 5, 4},
		{"from the last", 10, 9},
		{"past the end", 11, 10},
		{"far past the end", 1 << 40, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			got := f.readStream(stream, tc.from)
			if diff := cmp.Diff(want[tc.first:], ids(got)); diff != "" {
				t.Errorf("ReadStream(%d) ids (-want +got):\n%s", tc.from, diff)
			}
			for i, ev := range got {
				if v := uint64(tc.first + i + 1); ev.Version != v || ev.Stream != stream {
					t.Errorf("event %d: %q version %d, want %q version %d", i, ev.Stream, ev.Version, stream, v)
				}
			}
		})
	}
}

// testReadMissing: a stream without events is ErrStreamNotFound, even when
// streams with similar names exist.
func testReadMissing(f *fixture) {
	f.mustAppend(f.stream("missing-not"), events.NoStream, event(events.TypeToolProgress, 1))
	f.mustAppend(f.stream("missin"), events.NoStream, event(events.TypeToolProgress, 1))
	for _, from := range []uint64{0, 1, 5} {
		evs, err := f.s.ReadStream(f.ctx, f.stream("missing"), from)
		if !errors.Is(err, events.ErrStreamNotFound) {
			f.t.Errorf("ReadStream(missing, %d) = %d events, %v; want ErrStreamNotFound", from, len(evs), err)
		}
	}
}
