package jetstream_test

import (
	"testing"

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
