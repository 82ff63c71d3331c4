package jetstream_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

func progress(n int) events.Event {
	return events.Event{
		ID:   uuid.Must(uuid.NewV7()),
		Type: events.TypeToolProgress,
		Data: json.RawMessage(fmt.Sprintf(`{"tool":"t","attempt":%d}`, n)),
	}
}

// TestRestart appends events (each acknowledged), shuts the embedded server
// down, starts a new one on the same data directory, and checks that every
// acknowledged event is there, in order, with the same versions and
// positions, and that appends continue at the right version.
func TestRestart(t *testing.T) {
	for _, sync := range []bus.SyncPolicy{bus.SyncAlways, bus.SyncPeriodic} {
		t.Run("sync="+sync.String(), func(t *testing.T) {
			dir := t.TempDir()
			ctx := t.Context()

			srv1, err := bus.StartServer(bus.ServerConfig{StoreDir: dir, Sync: sync})
			if err != nil {
				t.Fatal(err)
			}
			nc1, err := srv1.Connect()
			if err != nil {
				t.Fatal(err)
			}
			s1 := newStore(t, nc1)
			var acked []events.Event
			streams := []string{"session-a", "session-b"}
			for i := range 30 {
				stream := streams[i%2]
				batch := []events.Event{progress(i)}
				if i%3 == 0 {
					batch = append(batch, progress(100+i), progress(200+i))
				}
				var version uint64
				if evs, err := s1.ReadStream(ctx, stream, 0); err == nil {
					version = evs[len(evs)-1].Version
				} else if !errors.Is(err, events.ErrStreamNotFound) {
					t.Fatal(err)
				}
				if _, err := s1.Append(ctx, stream, events.Exact(version), batch...); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
			}
			for ev, err := range s1.ReadAll(ctx, 0) {
				if err != nil {
					t.Fatal(err)
				}
				acked = append(acked, ev)
			}
			if len(acked) != 50 {
				t.Fatalf("read %d events before the restart, want the 50 appended", len(acked))
			}
			s1.Close()
			nc1.Close()
			srv1.Shutdown()

			srv2 := startServer(t, sync, dir)
			s2 := newStore(t, connect(t, srv2))
			var got []events.Event
			for ev, err := range s2.ReadAll(ctx, 0) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			if diff := cmp.Diff(acked, got); diff != "" {
				t.Fatalf("log after restart differs (-before +after):\n%s", diff)
			}

			a, err := s2.ReadStream(ctx, "session-a", 0)
			if err != nil {
				t.Fatal(err)
			}
			last := a[len(a)-1]
			if _, err := s2.Append(ctx, "session-a", events.Exact(last.Version-1), progress(-1)); !errors.Is(err, events.ErrWrongExpectedVersion) {
				t.Fatalf("append at a stale version after restart: err = %v, want ErrWrongExpectedVersion", err)
			}
			res, err := s2.Append(ctx, "session-a", events.Exact(last.Version), progress(-2), progress(-3))
			if err != nil {
				t.Fatalf("append after restart: %v", err)
			}
			want := events.AppendResult{FirstVersion: last.Version + 1, LastVersion: last.Version + 2, LastPosition: got[len(got)-1].Position + 2}
			appended, err := s2.ReadStream(ctx, "session-a", last.Version+1)
			if err != nil {
				t.Fatal(err)
			}
			want.Hashes = events.StoredHashes(appended) // the append returns the hashes of what it stored
			if diff := cmp.Diff(want, res); diff != "" {
				t.Fatalf("append after restart (-want +got):\n%s", diff)
			}
		})
	}
}
