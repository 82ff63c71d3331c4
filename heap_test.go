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

// The heap test's figures. heapRuns (heap_runs_test.go) is 100,000 runs,
// 5,000 under the race detector (heap_runs_race_test.go).
const (
	// heapWarmup runs come first, so that what the runtime builds on its
	// first runs (the agent's registry cache, pooled buffers, the
	// dispatcher's goroutines) is in the heap the test starts from. They
	// are few, so that the warm-up's own sessions, if the runtime releases
	// them during the measured runs, cannot hide a leak (10 sessions keep
	// about 65 KB before passivation).
	heapWarmup = 10
	// heapSlack and heapPerRun bound the growth of the live heap over
	// heapRuns runs: heapSlack + heapRuns*heapPerRun, 3.9 MiB over 100,000
	// runs (41 B a run), 2.1 MiB over 5,000 (439 B a run). heapSlack
	// covers what grows once to a working size and stays (the NATS
	// connection's buffers, mailbox queues, map tables that do not
	// shrink): readings of an idle runtime differ by less than 3 KB, and
	// before passivation the heap from the first run on grew as about
	// 0.4 MB + 6.5 KiB a run (1,000 to 2,000 runs), so the one-time part
	// is well under it. heapPerRun is the allowance for what may stay per
	// finished run: none is expected, and 20 B is less than the smallest
	// per-session entry a registry could keep (a map entry keyed by a
	// 36-byte session id is about 80 B), so such a leak fails the test.
	// Measured before passivation (issue 13, 2026-12-01): 5.7 KiB a run
	// over 100,000 runs, 6.3 KiB over 5,000 under -race; the log set aside
	// here is another 6.7 KiB a run.
	heapSlack  = 2 << 20
	heapPerRun = 20
	// heapSettle is how long the test waits, after the last run, for the
	// runtime to release the finished sessions (passivation after an idle
	// time): it reads the heap every heapPoll until the growth is within
	// the bound, and fails when it is not by then. Once the idle time is
	// configurable, this test should set it well below heapSettle.
	heapSettle = 30 * time.Second
	heapPoll   = 250 * time.Millisecond
)

// TestHeapFlat runs heapRuns sequential one-call runs (workload W1), each
// in a new session, on a memstore, and checks that the runtime's live heap
// (after GC) grows by less than heapSlack + heapRuns*heapPerRun: a node
// that serves a steady stream of requests must not keep what it needs no
// more of.
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
	rt := benchRuntime(t, weft.Config{Store: log})
	a := w1.agent(t, rt)
	ctx := t.Context()
	oneCallRuns(t, ctx, a, heapWarmup)
	log.drop()
	before := liveHeap()

	oneCallRuns(t, ctx, a, heapRuns)
	log.drop()
	bound := uint64(heapSlack + heapRuns*heapPerRun)
	growth := func() int64 { return int64(liveHeap()) - int64(before) }
	atEnd := growth()
	g, start := atEnd, time.Now()
	for g >= int64(bound) && time.Since(start) < heapSettle {
		time.Sleep(heapPoll)
		g = growth()
	}
	if p := os.Getenv("WEFT_HEAP_PROFILE"); p != "" {
		writeHeapProfile(t, p)
	}
	t.Logf("%d runs: live heap %d B after the warm-up; +%d B (%d B a run) after the last run, +%d B (%d B a run) %v later; bound %d B",
		heapRuns, before, atEnd, atEnd/heapRuns, g, g/heapRuns, time.Since(start).Round(time.Millisecond), bound)
	if g >= int64(bound) {
		t.Fatalf("the live heap grew by %d B over %d runs (%d B a run), %v after the last: want < %d B (heapSlack + %d B a run); finished sessions are not released",
			g, heapRuns, g/heapRuns, time.Since(start).Round(time.Millisecond), bound, heapPerRun)
	}
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
