package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
)

// stored is where an acknowledged append put an event.
type stored struct {
	stream  string
	version uint64
}

// corruptedStore appends 40 events to 4 sessions, stops the server,
// flips 40 bytes of the event stream's block file at offset(len) and
// restarts the server on it. It returns the store, the events by position
// and the first position the server can no longer read.
func corruptedStore(t *testing.T, offset func(n int) int) (*jsstore.Store, map[uint64]stored, uint64) {
	t.Helper()
	dir := t.TempDir()
	at := map[uint64]stored{}
	func() {
		srv, err := bus.StartServer(bus.ServerConfig{StoreDir: dir, Sync: bus.SyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		nc, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		s, err := jsstore.New(t.Context(), nc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for i := range 40 {
			stream := events.SessionStream(fmt.Sprint("s", i%4))
			res, err := s.Append(t.Context(), stream, events.Any, progress(i))
			if err != nil {
				t.Fatal(err)
			}
			at[res.LastPosition] = stored{stream, res.LastVersion}
		}
	}()
	var blocks []string
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		// The event stream's own blocks, not those of its blob bucket
		// (OBJ_WEFT_EVENTS_BLOBS).
		if err == nil && filepath.Base(filepath.Dir(filepath.Dir(p))) == jsstore.DefaultStreamName && strings.HasSuffix(p, ".blk") {
			blocks = append(blocks, p)
		}
		return err
	})
	if len(blocks) != 1 {
		t.Fatalf("block files of the event stream: %v, want one", blocks)
	}
	data, err := os.ReadFile(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	off := offset(len(data))
	for i := off; i < off+40; i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(blocks[0], data, 0o644); err != nil {
		t.Fatal(err)
	}

	nc := connect(t, startServer(t, bus.SyncAlways, dir))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), jsstore.DefaultStreamName)
	if err != nil {
		t.Fatal(err)
	}
	var bad uint64
	for seq := uint64(1); seq <= 40 && bad == 0; seq++ {
		if _, err := st.GetMsg(t.Context(), seq); errors.Is(err, jetstream.ErrMsgNotFound) {
			bad = seq
		}
	}
	if bad == 0 {
		t.Fatal("the corruption left every message readable")
	}
	return newStore(t, nc), at, bad
}

// A file store with a corrupted block: every read reports the unreadable
// message as an *events.DamagedStoreError within seconds (the bounded
// context fails the test instead of letting it hang): ReadAll with its
// position, ReadStream of its session with the stream and version, a
// subscription that meets it too; the other sessions read as before, and
// a stream whose last event is unreadable does not look new.
func TestDamagedFileStoreFailsFast(t *testing.T) {
	cases := []struct {
		name   string
		offset func(n int) int
	}{
		{"a message in the middle", func(n int) int { return n / 3 }},
		{"the last message", func(n int) int { return n - 80 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			s, at, bad := corruptedStore(t, tc.offset)
			damaged := at[bad]

			var derr *events.DamagedStoreError
			read := 0
			var err error
			for _, e := range s.ReadAll(ctx, 0) {
				if e != nil {
					err = e
					break
				}
				read++
			}
			if !errors.As(err, &derr) || !errors.Is(err, events.ErrDamagedStore) || derr.Position != bad {
				t.Fatalf("ReadAll after %d events: %v, want a *DamagedStoreError at position %d", read, err, bad)
			}
			if read != int(bad)-1 {
				t.Errorf("ReadAll yielded %d events before the damage at %d", read, bad)
			}

			for i := range 4 {
				stream := events.SessionStream(fmt.Sprint("s", i))
				evs, err := s.ReadStream(ctx, stream, 0)
				if stream != damaged.stream {
					if err != nil || len(evs) != 10 {
						t.Errorf("ReadStream(%s): %d events, %v, want its 10", stream, len(evs), err)
					}
					continue
				}
				if !errors.As(err, &derr) || derr.Stream != stream || derr.Version != damaged.version {
					t.Errorf("ReadStream of the damaged %s: %v, want a *DamagedStoreError naming it and version %d", stream, err, damaged.version)
				}
			}

			if damaged.version == 10 {
				// The stream's last event is the unreadable one: an append
				// must not take the stream for a new one.
				if _, err := s.Append(ctx, damaged.stream, events.NoStream, progress(99)); !errors.Is(err, events.ErrDamagedStore) {
					t.Errorf("Append(NoStream) to %s whose last event is unreadable: %v, want ErrDamagedStore", damaged.stream, err)
				}
				return
			}
			sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
			defer scancel()
			for _, e := range s.Subscribe(sctx, 0) {
				if e != nil {
					err = e
					break
				}
			}
			if !errors.As(err, &derr) || derr.Position != bad {
				t.Errorf("Subscribe: %v, want a *DamagedStoreError at position %d", err, bad)
			}
		})
	}
}
