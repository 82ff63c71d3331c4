package projections_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/projections"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The runtime started by -update leaves these behind.
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.(*ActorSystem).Shutdown"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewActorSystemWithConfig.func1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.(*DeadLetterProcess).init.func2"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}

// views returns a fresh set of every projection; the queue's clock is
// one minute after the history's last event.
func views(evs []events.Event) []projections.Projection {
	now := evs[len(evs)-1].Time.Add(time.Minute)
	return []projections.Projection{
		projections.NewArchive(),
		projections.NewQueue(projections.WithClock(func() time.Time { return now })),
		projections.NewAudit(),
	}
}

// newStore returns a memstore holding evs, appended in order.
func newStore(t *testing.T, evs []events.Event) *memstore.Store {
	t.Helper()
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	appendAll(t, s, evs)
	return s
}

func appendAll(t *testing.T, s events.Appender, evs []events.Event) {
	t.Helper()
	for _, ev := range evs {
		if _, err := s.Append(t.Context(), ev.Stream, events.Any, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// renders renders each projection.
func renders(t *testing.T, ps []projections.Projection) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range ps {
		var b bytes.Buffer
		if err := p.Render(&b); err != nil {
			t.Fatal(err)
		}
		out[p.Name()] = b.String()
	}
	return out
}

// build runs every projection over evs from position 0.
func build(t *testing.T, evs []events.Event) map[string]string {
	t.Helper()
	ps := views(evs)
	if _, err := projections.NewRunner(newStore(t, evs), ps).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	return renders(t, ps)
}

// waitingCut is the length of the prefix of evs that ends with the first
// run.waiting, 0 when there is none.
func waitingCut(evs []events.Event) int {
	for i, ev := range evs {
		if ev.Type == events.TypeRunWaiting {
			return i + 1
		}
	}
	return 0
}

func TestGolden(t *testing.T) {
	for _, h := range histories {
		evs := loadHistory(t, h)
		if _, err := events.VerifyStreams(eventSeq(evs), events.VerifyOptions{}); err != nil {
			t.Errorf("%s: hash chain of the golden history: %v", h.name, err)
		}
		cuts := map[string]int{"full": len(evs)}
		if n := waitingCut(evs); n > 0 {
			cuts["waiting"] = n
		}
		for cut, n := range cuts {
			t.Run(h.name+"/"+cut, func(t *testing.T) {
				for name, got := range build(t, evs[:n]) {
					path := filepath.Join("testdata", h.name+"."+cut+"."+name+".json")
					if *update {
						if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatalf("golden output (record it with -update): %v", err)
					}
					if d := cmp.Diff(string(want), got); d != "" {
						t.Errorf("%s (-golden +got):\n%s", name, d)
					}
				}
			})
		}
	}
}

func TestCatchUp(t *testing.T) {
	for _, h := range histories {
		t.Run(h.name, func(t *testing.T) {
			evs := loadHistory(t, h)
			half := len(evs) / 2
			store := newStore(t, evs[:half])
			ps := views(evs)
			var last projections.Progress
			r := projections.NewRunner(store, ps, projections.WithProgress(func(p projections.Progress) { last = p }, 1))
			pr, err := r.CatchUp(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if pr.Read != uint64(half) || pr.Applied != uint64(half*len(ps)) || last != pr {
				t.Errorf("first catch-up = %+v (reported %+v), want %d events read", pr, last, half)
			}
			// Offline: the rest is appended while nothing runs.
			appendAll(t, store, evs[half:])
			pr, err = r.CatchUp(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if want := (projections.Progress{Read: uint64(len(evs) - half), Applied: uint64((len(evs) - half) * len(ps)), Position: uint64(len(evs))}); pr != want {
				t.Errorf("second catch-up = %+v, want %+v", pr, want)
			}
			for _, p := range ps {
				if p.Checkpoint() != uint64(len(evs)) {
					t.Errorf("%s checkpoint = %d, want %d", p.Name(), p.Checkpoint(), len(evs))
				}
			}
			if d := cmp.Diff(build(t, evs), renders(t, ps)); d != "" {
				t.Errorf("caught up differs from a full build (-full +caught up):\n%s", d)
			}
		})
	}
}

func TestCatchUpLaggingProjection(t *testing.T) {
	evs := loadHistory(t, histories[0])
	store := newStore(t, evs)
	ps := views(evs)
	// The archive is up to date; the others start from scratch.
	if _, err := projections.NewRunner(store, ps[:1]).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	pr, err := projections.NewRunner(store, ps).CatchUp(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(len(evs) * (len(ps) - 1)); pr.Applied != want {
		t.Errorf("applied %d, want %d (the archive skips what it has)", pr.Applied, want)
	}
	if d := cmp.Diff(build(t, evs), renders(t, ps)); d != "" {
		t.Errorf("(-full +lagging):\n%s", d)
	}
}

func TestRebuild(t *testing.T) {
	for _, h := range histories {
		t.Run(h.name, func(t *testing.T) {
			evs := loadHistory(t, h)
			ps := views(evs)
			r := projections.NewRunner(newStore(t, evs), ps)
			if _, err := r.CatchUp(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := renders(t, ps)
			pr, err := r.Rebuild(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if pr.Read != uint64(len(evs)) {
				t.Errorf("rebuild read %d events, want %d", pr.Read, len(evs))
			}
			if d := cmp.Diff(before, renders(t, ps)); d != "" {
				t.Errorf("rebuild differs (-before +rebuilt):\n%s", d)
			}
		})
	}
}

func TestIdempotentApply(t *testing.T) {
	for _, h := range histories {
		t.Run(h.name, func(t *testing.T) {
			evs := loadHistory(t, h)
			ps := views(evs)
			for i, ev := range evs {
				ev.Position = uint64(i + 1) // as the store assigns them
				d, err := projections.Decode(ev)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					for range 2 {
						if err := p.Apply(d); err != nil {
							t.Fatal(err)
						}
					}
					if i > 0 { // an older event again: a no-op too
						prev, _ := projections.Decode(evs[i-1])
						prev.Position = uint64(i)
						if err := p.Apply(prev); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if d := cmp.Diff(build(t, evs), renders(t, ps)); d != "" {
				t.Errorf("(-once +twice):\n%s", d)
			}
		})
	}
}

func TestFollow(t *testing.T) {
	evs := loadHistory(t, histories[1])
	half := len(evs) / 2
	store := newStore(t, evs[:half])
	ps := views(evs)
	ctx, cancel := context.WithCancel(t.Context())
	// Every report goes to reports: the appends may land before the
	// catch-up's read or after it, as live events.
	reports := make(chan projections.Progress, 4*len(evs))
	r := projections.NewRunner(store, ps, projections.WithProgress(func(p projections.Progress) { reports <- p }, 1))
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx) }()
	appendAll(t, store, evs[half:])
	for p := range reports {
		if p.Position == uint64(len(evs)) {
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow = %v, want context.Canceled", err)
	}
	if d := cmp.Diff(build(t, evs), renders(t, ps)); d != "" {
		t.Errorf("(-full +followed):\n%s", d)
	}
}
