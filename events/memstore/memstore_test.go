package memstore_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/events/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newStore is the suite's Factory, with a small payload limit so the
// payload tests stay cheap.
func newStore(opts ...memstore.Option) storetest.Factory {
	return func(t testing.TB) events.Store {
		s := memstore.New(opts...)
		t.Cleanup(func() { s.Close() })
		return s
	}
}

// blobLimit is the Data limit of the conformance run with blobs: above
// the suite's 20 MB events, below the 64 MiB default, to keep it cheap.
const blobLimit = 24 << 20

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore(memstore.WithMaxDataBytes(blobLimit)), storetest.Options{MaxDataBytes: blobLimit, Blobs: true,
		TamperBlob: func(t testing.TB, s events.Store, ref events.BlobRef, data []byte) {
			memstore.TamperBlob(s.(*memstore.Store), ref, data)
		}})
}

// TestConformanceKeyed runs the suite on stores with chain keys.
func TestConformanceKeyed(t *testing.T) {
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, newStore(memstore.WithChainKeys(keys), memstore.WithMaxDataBytes(blobLimit)),
		storetest.Options{ChainKeys: keys, MaxDataBytes: blobLimit, Blobs: true,
			TamperBlob: func(t testing.TB, s events.Store, ref events.BlobRef, data []byte) {
				memstore.TamperBlob(s.(*memstore.Store), ref, data)
			}})
}

func TestConformanceSmallLimit(t *testing.T) {
	storetest.Run(t, newStore(memstore.WithMaxDataBytes(1000)), storetest.Options{MaxDataBytes: 1000, Concurrency: 3})
}

func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, newStore())
}

// BenchmarkStoreKeyed is BenchmarkStore on a store with chain keys.
func BenchmarkStoreKeyed(b *testing.B) {
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	storetest.RunBenchmarks(b, newStore(memstore.WithChainKeys(keys)))
}
