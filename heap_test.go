package weft_test

import (
	"context"
	"iter"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// The heap test's figures. heapWarmup, heapRuns and heapSlack are in
// heap_runs_test.go (25,000 + 100,000 runs, 3 MiB) and, under the race
// detector, heap_runs_race_test.go (5,000 + 5,000 runs, 4 MiB).
//
// Measured on 2026-12-01, W1 runs in new sessions, the log set aside:
//   - before passivation (issue 13), the runtime kept 5.7 KiB a run
//     (6.3 KiB under -race); the memory log keeps another 6.7 KiB a run;
//   - with passivation (SessionIdle 100 ms), the heap grows by about 14 MB
//     over the first 25,000 runs and then by -0.7 to +1.2 MB per 12,500
//     runs; this test measured -1.0 and +2.6 MB over its 100,000 runs
//     (readings 250 ms apart after GC fall by 0.1-0.4 MB for a second
//     after the last run and keep falling for about 30 s, apparently the
//     30 s store deadlines of the released sessions' contexts). The
//     one-time part is mostly protoactor's process registry: 1,024 x 32
//     Go maps (actor.SliceMap of concurrent-map shards), each of which
//     allocates its first table (288 B) on the first actor id hashed to
//     it, ~9.4 MB once about 100,000 actors have been spawned. The
//     warm-up runs take it.
const (
	// heapPerRun is the allowance for what may stay per finished run,
	// besides heapSlack: none is expected, and 20 B is less than the
	// smallest per-session entry a registry could keep (a map entry keyed
	// by a 36-byte session id is about 80 B). Over 100,000 runs the bound
	// is 5.1 MB (51 B a run), so such a leak fails the test.
	heapPerRun = 20
	// heapIdle is the runtime's Config.SessionIdle in this test: a
	// settled session is released after 100 ms without a command (the
	// default, 30 s, would keep the last 30 s of sessions in memory).
	heapIdle = 100 * time.Millisecond
	// settledHeap reads the live heap every heapPoll until a reading is
	// no more than heapQuiet below the one before, for at most heapSettle.
	heapPoll   = 250 * time.Millisecond
	heapQuiet  = 64 << 10
	heapSettle = 30 * time.Second
)

// TestHeapFlat runs heapWarmup then heapRuns sequential one-call runs
// (workload W1), each in a new session, on a memstore, and checks that the
// runtime's live heap (after GC, once the finished sessions are released)
// grows over the heapRuns runs by less than heapSlack + heapRuns*heapPerRun:
// a node that serves a steady stream of requests must not keep what it
// needs no more of. The warm-up takes what the runtime builds once and
// keeps (see the figures above); its sessions are released before the
// first reading, so that their release cannot hide a leak.
//
// The log itself is set aside: memstore keeps every event in memory by
// design (it is the log; ~11 events a run), so the test's store is a
// memstore that the test replaces by an empty one (droppableLog.drop)
// after the warm-up and after the runs, while no run is in flight. The
// runs are in new sessions, which never read an earlier session's stream;
// what the runtime keeps of a session (its actor, state, registries,
// subscriptions) stays in the heap and is counted.
//
// WEFT_HEAP_PROFILE=file writes the heap profile at the last reading, the
// runtime still open (go tool pprof -sample_index=inuse_space -top file).
func TestHeapFlat(t *testing.T) {
	log := newDroppableLog(t)
	rt := benchRuntime(t, weft.Config{Store: log, SessionIdle: heapIdle})
	a := w1.agent(t, rt)
	ctx := t.Context()
	oneCallRuns(t, ctx, a, heapWarmup)
	log.drop()
	before := settledHeap()

	oneCallRuns(t, ctx, a, heapRuns)
	log.drop()
	after := settledHeap()
	if p := os.Getenv("WEFT_HEAP_PROFILE"); p != "" {
		writeHeapProfile(t, p)
	}
	g, bound := int64(after)-int64(before), int64(heapSlack+heapRuns*heapPerRun)
	t.Logf("%d runs after %d: live heap %d B before, %d B after: %+d B (%d B a run); bound %d B",
		heapRuns, heapWarmup, before, after, g, g/heapRuns, bound)
	if g >= bound {
		t.Fatalf("the live heap grew by %d B over %d runs (%d B a run): want < %d B (heapSlack + %d B a run); finished sessions are not released",
			g, heapRuns, g/heapRuns, bound, heapPerRun)
	}
}

// settledHeap returns the live heap once the runtime has released what it
// releases by itself: it reads it every heapPoll until a reading is no
// more than heapQuiet below the one before, or heapSettle has passed.
func settledHeap() uint64 {
	prev := liveHeap()
	for start := time.Now(); time.Since(start) < heapSettle; {
		time.Sleep(heapPoll)
		h := liveHeap()
		if h+heapQuiet >= prev {
			return h
		}
		prev = h
	}
	return prev
}

// oneCallRuns runs n runs of a, each in a new session, one after the other.
func oneCallRuns(t *testing.T, ctx context.Context, a *weft.Agent, n int) {
	t.Helper()
	for i := range n {
		res, err := a.Run(ctx, "go")
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("run %d: Run = %+v, %v", i, res, err)
		}
	}
}

// liveHeap returns the bytes of live heap objects after a full collection
// (two, so that what sync.Pools held goes too).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func writeHeapProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// droppableLog is the heap test's event store: a memstore (chain keyed,
// as benchmarks' are) that drop replaces by an empty one. Everything else
// it forwards to the current memstore, the optional methods the runtime
// looks for included (events.BlobStore, MaxDataBytes).
type droppableLog struct {
	keys *events.ChainKeys
	mu   sync.RWMutex
	s    *memstore.Store
}

var (
	_ events.Store     = (*droppableLog)(nil)
	_ events.BlobStore = (*droppableLog)(nil)
)

func newDroppableLog(t *testing.T) *droppableLog {
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	l := &droppableLog{keys: keys, s: memstore.New(memstore.WithChainKeys(keys))}
	t.Cleanup(func() { l.cur().Close() })
	return l
}

func (l *droppableLog) cur() *memstore.Store {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.s
}

// drop replaces the log by an empty one and closes the old one, so that a
// reader that still held it fails instead of keeping it.
func (l *droppableLog) drop() {
	l.mu.Lock()
	old := l.s
	l.s = memstore.New(memstore.WithChainKeys(l.keys))
	l.mu.Unlock()
	old.Close()
}

func (l *droppableLog) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	return l.cur().Append(ctx, stream, expected, evs...)
}

func (l *droppableLog) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	return l.cur().ReadStream(ctx, stream, from)
}

func (l *droppableLog) ReadAll(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return l.cur().ReadAll(ctx, after)
}

func (l *droppableLog) Subscribe(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return l.cur().Subscribe(ctx, after)
}

func (l *droppableLog) PutBlob(ctx context.Context, data []byte) (events.BlobRef, error) {
	return l.cur().PutBlob(ctx, data)
}

func (l *droppableLog) GetBlob(ctx context.Context, ref events.BlobRef) ([]byte, error) {
	return l.cur().GetBlob(ctx, ref)
}

func (l *droppableLog) MaxDataBytes() int { return l.cur().MaxDataBytes() }

// Close does nothing: the runtime does not own the store (Config.Store);
// the test's cleanup closes the current memstore.
func (l *droppableLog) Close() error { return nil }
