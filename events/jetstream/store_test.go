package jetstream_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
	"github.com/weft-run/weft/events/storetest"
)

// startServer starts an embedded server on a fresh directory (or dir, when
// given) and shuts it down on cleanup.
func startServer(t testing.TB, sync bus.SyncPolicy, dir string) *bus.Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: dir, Sync: sync})
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// connect opens an in-process connection closed on cleanup.
func connect(t testing.TB, srv *bus.Server) *nats.Conn {
	t.Helper()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// newStore returns a store on nc, closed on cleanup.
func newStore(t testing.TB, nc *nats.Conn, opts ...jsstore.Option) *jsstore.Store {
	t.Helper()
	s, err := jsstore.New(context.Background(), nc, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// embeddedFactory gives every store its own embedded server.
func embeddedFactory(sync bus.SyncPolicy) storetest.Factory {
	return func(t testing.TB) events.Store {
		return newStore(t, connect(t, startServer(t, sync, "")))
	}
}

// blobLimit is the Data limit of the conformance runs: above the suite's
// 20 MB events, below the 64 MiB default, to keep them cheap.
const blobLimit = 24 << 20

// conns maps the stores of the conformance runs to their connections, for
// tamperBlob.
var conns sync.Map // *jsstore.Store → *nats.Conn

// tamperBlob replaces the object of blob ref in the store's bucket with
// data, through the Object Store API (the object store keeps its own
// digest of what was put, so only the store's own check sees the change).
func tamperBlob(t testing.TB, s events.Store, ref events.BlobRef, data []byte) {
	t.Helper()
	st := s.(*jsstore.Store)
	nc, _ := conns.Load(st)
	js, err := jetstream.New(nc.(*nats.Conn))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(t.Context(), st.Blobs().Bucket())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(t.Context(), ref.SHA256, data); err != nil {
		t.Fatal(err)
	}
}

func TestConformanceEmbedded(t *testing.T) {
	storetest.Run(t, func(t testing.TB) events.Store {
		nc := connect(t, startServer(t, bus.SyncPeriodic, ""))
		s := newStore(t, nc, jsstore.WithMaxDataBytes(blobLimit))
		conns.Store(s, nc)
		return s
	}, storetest.Options{MaxDataBytes: blobLimit, Blobs: true, TamperBlob: tamperBlob})
}

// TestConformanceEmbeddedKeyed runs the suite on keyed stores.
func TestConformanceEmbeddedKeyed(t *testing.T) {
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	probe := newStore(t, connect(t, startServer(t, bus.SyncPeriodic, "")))
	storetest.Run(t, func(t testing.TB) events.Store {
		return newStore(t, connect(t, startServer(t, bus.SyncPeriodic, "")), jsstore.WithChainKeys(keys))
	}, storetest.Options{MaxDataBytes: probe.MaxDataBytes(), ChainKeys: keys})
}

// TestConformanceExternal runs the suite against the NATS server at
// WEFT_NATS_URL, each store on its own JetStream stream and subject root,
// deleted on cleanup.
func TestConformanceExternal(t *testing.T) {
	url := os.Getenv("WEFT_NATS_URL")
	if url == "" {
		t.Skip("set WEFT_NATS_URL to a nats-server 2.12+ with JetStream to run the suite against it")
	}
	nc, err := bus.Connect(t.Context(), strings.Split(url, ","), bus.WithName("weft-events-test"))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	var maxData int
	factory := func(t testing.TB) events.Store {
		var b [4]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		subjects, err := bus.NewSubjects("test" + id + ".weft")
		if err != nil {
			t.Fatal(err)
		}
		name := "WEFT_TEST_" + strings.ToUpper(id)
		s := newStore(t, nc, jsstore.WithStreamName(name), jsstore.WithSubjects(subjects), jsstore.WithMaxDataBytes(blobLimit))
		maxData = s.MaxDataBytes()
		conns.Store(s, nc)
		t.Cleanup(func() {
			js, err := jetstream.New(nc)
			if err == nil {
				err = js.DeleteStream(context.Background(), name)
			}
			if err == nil {
				err = js.DeleteObjectStore(context.Background(), s.Blobs().Bucket())
			}
			if err != nil {
				t.Errorf("delete test stream %s: %v", name, err)
			}
		})
		return s
	}
	probe := factory(t)
	probe.Close()
	storetest.Run(t, factory, storetest.Options{MaxDataBytes: maxData, Blobs: true, TamperBlob: tamperBlob})
}

// TestNewKeepsExistingConfig: a store opened without options on an
// existing log (as the command line opens a cluster's) keeps the stream's
// duplicate window and replicas; an explicit option still changes them.
func TestNewKeepsExistingConfig(t *testing.T) {
	nc := connect(t, startServer(t, bus.SyncPeriodic, ""))
	newStore(t, nc, jsstore.WithDuplicateWindow(7*time.Minute))
	duplicates := func() time.Duration {
		t.Helper()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.Stream(t.Context(), jsstore.DefaultStreamName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Replicas != 1 || !info.Config.AllowAtomicPublish || !info.Config.DenyDelete {
			t.Errorf("stream config = %+v, want the store's settings", info.Config)
		}
		return info.Config.Duplicates
	}
	newStore(t, nc)
	if got := duplicates(); got != 7*time.Minute {
		t.Errorf("after New without options: duplicate window %v, want the existing 7m kept", got)
	}
	newStore(t, nc, jsstore.WithDuplicateWindow(3*time.Minute))
	if got := duplicates(); got != 3*time.Minute {
		t.Errorf("after New with WithDuplicateWindow(3m): duplicate window %v, want 3m", got)
	}
}

// TestNewMigratesEventSubjects: a log written when the stream took the
// event subjects themselves ("weft.evt.>") keeps its events when a store
// opens it: New moves the stream to the ingest subjects with a transform
// onto the same stored subjects, the old events read back, the chain goes
// on, and a publish on the event subjects is no longer stored.
func TestNewMigratesEventSubjects(t *testing.T) {
	ctx := t.Context()
	nc := connect(t, startServer(t, bus.SyncPeriodic, ""))
	old := newStore(t, nc)
	if _, err := old.Append(ctx, "session-m", events.NoStream, progress(1), progress(2)); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, jsstore.DefaultStreamName)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.Subjects, cfg.SubjectTransform = []string{bus.Default.AllEvents()}, nil // the old layout
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}

	s := newStore(t, nc)
	if _, err := s.Append(ctx, "session-m", events.Exact(2), progress(3)); err != nil {
		t.Fatal(err)
	}
	evs, err := s.ReadStream(ctx, "session-m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("read %d events, want 3", len(evs))
	}
	if cerr := events.VerifyChain(evs); cerr != nil {
		t.Fatalf("chain after migration: %v", cerr)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{bus.Default.AllLogIngest()}, info.Config.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
	// A raw publish on an event subject is a live message, not an event.
	if err := nc.Publish("weft.evt.session.m.tool.progress", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "session-m", events.Exact(3), progress(4)); err != nil {
		t.Fatalf("append after a raw publish on the event subjects: %v", err)
	}
	if info, err = st.Info(ctx); err != nil || info.State.Msgs != 4 {
		t.Fatalf("stream holds %d messages (%v), want the 4 events", info.State.Msgs, err)
	}
}

// TestStoreWithoutBlobBucket: a store that cannot open its blob bucket (a
// reader's credentials; here a bucket name the server refuses) still opens
// and keeps small events, and refuses large ones with ErrPayloadTooLarge
// saying why, instead of failing to open for every reader.
func TestStoreWithoutBlobBucket(t *testing.T) {
	s := newStore(t, connect(t, startServer(t, bus.SyncPeriodic, "")), jsstore.WithBlobBucket("not a bucket"))
	small := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t"})
	if _, err := s.Append(t.Context(), "s", events.NoStream, small); err != nil {
		t.Fatalf("Append of a small event: %v", err)
	}
	big := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t", Message: strings.Repeat("m", 2<<20)})
	_, err := s.Append(t.Context(), "s", events.Any, big)
	if !errors.Is(err, events.ErrPayloadTooLarge) || !strings.Contains(err.Error(), "blob bucket") {
		t.Errorf("Append of 2 MB without the bucket: %v, want ErrPayloadTooLarge about the blob bucket", err)
	}
}
