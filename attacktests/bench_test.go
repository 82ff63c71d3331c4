package attacktests

import (
	"strings"
	"testing"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// BenchmarkReaderReadStream reads a waiting session's stream as a reader
// (its consumers go through the role's account and the API guard).
func BenchmarkReaderReadStream(b *testing.B) {
	bn := newBench(b)
	sess, _ := bn.waiting(b)
	store := readerStore(b, bn)
	b.ResetTimer()
	for b.Loop() {
		if evs, err := store.ReadStream(b.Context(), events.SessionStream(sess.ID()), 0); err != nil || len(evs) == 0 {
			b.Fatalf("ReadStream = %d events, %v", len(evs), err)
		}
	}
}

// BenchmarkReaderReadLargeEvent reads a 2 MB event by reference as a
// reader (its blob through an Object Store push consumer).
func BenchmarkReaderReadLargeEvent(b *testing.B) {
	bn := newBench(b)
	node, err := jetstream.New(b.Context(), bn.rt.Conn())
	if err != nil {
		b.Fatal(err)
	}
	defer node.Close()
	big := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t", Message: strings.Repeat("m", 2<<20)})
	if _, err := node.Append(b.Context(), "session-big", events.NoStream, big); err != nil {
		b.Fatal(err)
	}
	store := readerStore(b, bn)
	b.ResetTimer()
	for b.Loop() {
		if evs, err := store.ReadStream(b.Context(), "session-big", 0); err != nil || len(evs) != 1 {
			b.Fatalf("ReadStream = %d events, %v", len(evs), err)
		}
	}
}

func readerStore(b *testing.B, bn *bench) *jetstream.Store {
	c := bn.conn(b, bus.RoleReader)
	store, err := jetstream.New(b.Context(), c.nc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return store
}
