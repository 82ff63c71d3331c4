package jetstream_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events/storetest"
)

// BenchmarkStore runs the storetest benchmarks on the embedded server under
// each fsync policy:
//
//	go test -run '^$' -bench . -benchmem ./events/jetstream/
func BenchmarkStore(b *testing.B) {
	for _, sync := range []bus.SyncPolicy{bus.SyncAlways, bus.SyncPeriodic} {
		b.Run("sync="+sync.String(), func(b *testing.B) {
			storetest.RunBenchmarks(b, embeddedFactory(sync))
		})
	}
}

// BenchmarkAppendParallel measures aggregate append throughput when many
// sessions append at once (each goroutine its own stream, batches of 4),
// which is how a runtime with concurrent sessions writes, with the p50/p99
// latency of one append:
//
//	go test -run '^$' -bench AppendParallel -benchmem ./events/jetstream/
func BenchmarkAppendParallel(b *testing.B) {
	for _, policy := range []bus.SyncPolicy{bus.SyncAlways, bus.SyncPeriodic} {
		for _, size := range []int{1, 4} {
			b.Run(fmt.Sprintf("sync=%s/batch%d", policy, size), func(b *testing.B) {
				s := embeddedFactory(policy)(b)
				ctx := b.Context()
				var next atomic.Int64
				var mu sync.Mutex
				var lat []time.Duration
				b.SetParallelism(16)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					stream := fmt.Sprintf("bench-%d", next.Add(1))
					var version uint64
					var mine []time.Duration
					defer func() {
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
					for pb.Next() {
						evs := make([]events.Event, size)
						for i := range evs {
							evs[i] = events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeToolReturned, Data: benchData}
						}
						start := time.Now()
						res, err := s.Append(ctx, stream, events.Exact(version), evs...)
						if err != nil {
							b.Errorf("Append: %v", err)
							return
						}
						mine = append(mine, time.Since(start))
						version = res.LastVersion
					}
				})
				b.StopTimer()
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
				if len(lat) > 0 {
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				}
			})
		}
	}
}

var benchData = []byte(`{"tool":"search","return":{"content":"three results found for the query"},"attempt":1}`)
