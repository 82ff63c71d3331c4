package projections_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/projections"
)

// benchEvents is the size of the synthetic log: 100,000 events, or
// WEFT_BENCH_EVENTS (e.g. 1000000).
func benchEvents(b *testing.B) int {
	n := 100_000
	if s := os.Getenv("WEFT_BENCH_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("WEFT_BENCH_EVENTS=%q: want a positive integer", s)
		}
		n = v
	}
	return n
}

// syntheticLog fills a memstore with n events: the golden histories
// repeated, each copy with fresh session and event ids.
func syntheticLog(b *testing.B, n int) *memstore.Store {
	b.Helper()
	var golden [][]events.Event
	for _, h := range histories {
		golden = append(golden, loadHistory(b, h))
	}
	s := memstore.New()
	ctx := b.Context()
	for count, copyN := 0, 0; count < n; copyN++ {
		h := golden[copyN%len(golden)]
		session := uuid.NewString()
		stream := events.SessionStream(session)
		batch := make([]events.Event, 0, len(h))
		for _, ev := range h[:min(len(h), n-count)] {
			ev.ID = uuid.New()
			ev.SessionID, ev.Stream = session, stream
			batch = append(batch, ev)
		}
		if _, err := s.Append(ctx, stream, events.NoStream, batch...); err != nil {
			b.Fatal(err)
		}
		count += len(batch)
	}
	return s
}

// BenchmarkRebuild rebuilds every projection from a synthetic log.
func BenchmarkRebuild(b *testing.B) {
	n := benchEvents(b)
	store := syntheticLog(b, n)
	b.Cleanup(func() { store.Close() })
	evs := loadHistory(b, histories[0])
	r := projections.NewRunner(store, views(evs))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		pr, err := r.Rebuild(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if pr.Read != uint64(n) {
			b.Fatalf("read %d events, want %d", pr.Read, n)
		}
	}
	// The CPU time is what a shared machine changes least (wall time
	// grows with the load).
	if cpu = processCPU() - cpu; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
