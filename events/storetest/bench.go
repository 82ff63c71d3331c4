package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// readAllEvents is the size of the log the readall benchmark reads.
const readAllEvents = 10_000

// RunBenchmarks runs the sub-benchmarks append/single (one event per
// Append), append/single-new (the same, the event built by events.New),
// append/batch4 (four events per Append), append/steps4 (four
// events per events.AppendSteps) and readall (reading a
// log of 10,000 events with ReadAll), each on a fresh store from newStore
// and each reporting events/s.
func RunBenchmarks(b *testing.B, newStore Factory) {
	b.Run("append/single", func(b *testing.B) { benchAppend(b, newStore, 1) })
	b.Run("append/single-new", func(b *testing.B) { benchAppendNew(b, newStore) })
	b.Run("append/batch4", func(b *testing.B) { benchAppend(b, newStore, 4) })
	b.Run("append/steps4", func(b *testing.B) { benchSteps(b, newStore, 4) })
	b.Run("readall", func(b *testing.B) { benchReadAll(b, newStore) })
}

// benchData is the Data of benchmark events, a typical small tool return.
var benchData = []byte(`{"tool":"search","return":{"content":[{"type":"text","text":"three results found for the query, the first of which is the one you want"}]},"attempt":1}`)

func benchEvents(n int) []events.Event {
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeToolReturned, SessionID: "bench", Data: benchData}
	}
	return evs
}

// benchAppend appends batches of size events to one stream, each at the
// stream's exact version.
func benchAppend(b *testing.B, newStore Factory, size int) {
	s := newStore(b)
	ctx := b.Context()
	stream := randomPrefix() + "bench"
	var version uint64
	n := 0
	for b.Loop() {
		res, err := s.Append(ctx, stream, events.Exact(version), benchEvents(size)...)
		if err != nil {
			b.Fatalf("Append: %v", err)
		}
		version = res.LastVersion
		n += size
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// benchAppendNew appends single events built by events.New (their Data
// sealed: taken in without a decode, see events.NewData).
func benchAppendNew(b *testing.B, newStore Factory) {
	s := newStore(b)
	ctx := b.Context()
	stream := randomPrefix() + "bench"
	var version uint64
	n := 0
	for b.Loop() {
		ev, err := events.New(events.TypeToolReturned, events.ToolReturned{Tool: "search", Attempt: 1,
			Return: json.RawMessage(`{"content":[{"type":"text","text":"three results found for the query, the first of which is the one you want"}]}`)})
		if err != nil {
			b.Fatal(err)
		}
		res, err := s.Append(ctx, stream, events.Exact(version), ev)
		if err != nil {
			b.Fatalf("Append: %v", err)
		}
		version = res.LastVersion
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// benchSteps appends steps of size events to one stream with
// events.AppendSteps, each at the stream's exact version.
func benchSteps(b *testing.B, newStore Factory, size int) {
	s := newStore(b)
	ctx := b.Context()
	stream := randomPrefix() + "bench"
	var version uint64
	n := 0
	for b.Loop() {
		res, err := events.AppendSteps(ctx, s, stream, events.Exact(version), benchEvents(size)...)
		if err != nil {
			b.Fatalf("AppendSteps: %v", err)
		}
		version = res.LastVersion
		n += size
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// benchReadAll reads a log of readAllEvents events with ReadAll.
func benchReadAll(b *testing.B, newStore Factory) {
	s := newStore(b)
	ctx := b.Context()
	prefix := randomPrefix()
	if err := populate(ctx, s, prefix, readAllEvents); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		got := 0
		for ev, err := range s.ReadAll(ctx, 0) {
			if err != nil {
				b.Fatalf("ReadAll: %v", err)
			}
			if len(ev.Stream) > len(prefix) && ev.Stream[:len(prefix)] == prefix {
				got++
			}
			n++
		}
		if got != readAllEvents {
			b.Fatalf("ReadAll read %d of the benchmark's events, want %d", got, readAllEvents)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// populate appends n events to 100 streams in batches of 50.
func populate(ctx context.Context, s events.Store, prefix string, n int) error {
	const batch = 50
	for i := 0; i < n; i += batch {
		stream := fmt.Sprintf("%sread-%d", prefix, i/batch%100)
		if _, err := s.Append(ctx, stream, events.Any, benchEvents(min(batch, n-i))...); err != nil {
			return fmt.Errorf("populate: %w", err)
		}
	}
	return nil
}
