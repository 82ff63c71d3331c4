package esdb_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/esdb"
	"github.com/weft-run/weft/events/esdb/esdbtest"
	"github.com/weft-run/weft/events/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// maxData is the Data limit the stores under test are configured with: it
// leaves room under the server's 1 MiB append limit for the metadata, so
// that an event of exactly maxData bytes is accepted.
const maxData = 512 << 10

// urlEnv names the environment variable with the connection string of a
// real EventStoreDB server for the tests that need one.
const urlEnv = "WEFT_ESDB_URL"

// newTestStore returns a store on a fresh protocol server.
func newTestStore(t testing.TB, opts ...esdb.Option) (*esdb.Store, *esdbtest.Server) {
	t.Helper()
	srv := esdbtest.Start(t, esdbtest.Options{})
	s, err := esdb.New(srv.ConnectionString(), append([]esdb.Option{esdb.WithMaxDataBytes(maxData)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, srv
}

// TestConformance runs the conformance suite against the in-test protocol
// server: a fresh server per store.
func TestConformance(t *testing.T) {
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, func(t testing.TB) events.Store {
		s, _ := newTestStore(t, esdb.WithChainKeys(keys))
		return s
	}, storetest.Options{MaxDataBytes: maxData, ChainKeys: keys})
}

// TestConformanceRealServer runs the conformance suite against the server
// named by WEFT_ESDB_URL. Every store is scoped to a fresh stream prefix
// (WithStreamPrefix), so ReadAll and Subscribe see only that store's
// streams even though the database is shared.
func TestConformanceRealServer(t *testing.T) {
	url := os.Getenv(urlEnv)
	if url == "" {
		t.Skip("set " + urlEnv + " to an EventStoreDB connection string (e.g. esdb://localhost:2113?tls=false) to run the suite against a real server")
	}
	storetest.Run(t, func(t testing.TB) events.Store {
		s, err := esdb.New(url, esdb.WithMaxDataBytes(maxData), esdb.WithStreamPrefix(uniquePrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, storetest.Options{MaxDataBytes: maxData})
}

// uniquePrefix returns a stream prefix no other test run uses.
func uniquePrefix(t testing.TB) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "weft-test-" + hex.EncodeToString(b[:]) + "-"
}

// BenchmarkStore runs the suite's benchmarks against the protocol server.
// The figures measure the adapter, the client and gRPC over loopback with
// an in-memory log, not EventStoreDB's storage.
func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(t testing.TB) events.Store {
		s, _ := newTestStore(t)
		return s
	})
}
