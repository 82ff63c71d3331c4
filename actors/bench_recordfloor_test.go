package actors

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// BenchmarkRecordFloor measures what recording a run costs on its own,
// with no actor, mailbox, goroutine, model or tool: the events of a real
// run (taken from the log of one run on a host, with the typed values the
// session actor keeps beside them) built again with newRecord for a new
// session each run, appended to a keyed memstore in the steps the session
// actor appends them in (see floorSteps), and folded with the hashes the
// store returns, as the actor does. It is the floor, on the memory store,
// of what the runtime promises for every event (encoded, sealed, hashed
// into the keyed chain, kept, indexed by id for idempotency, folded),
// which the root package's BenchmarkWorkload/W1 and W3 on memory cannot go
// under; W1 is a one-call run (11 events), W3 a run of 64 calls (200):
//
//	go test -run '^$' -bench BenchmarkRecordFloor -benchtime=2000x -benchmem ./actors
//
// It reports p50-µs per run (and, for W3, ns/call) besides ns/op and
// allocs/op; timings are reported, never asserted.
func BenchmarkRecordFloor(b *testing.B) {
	for _, wl := range []struct {
		name  string
		calls int
	}{{"W1", 1}, {"W3", 64}} {
		b.Run(wl.name, func(b *testing.B) {
			keys, err := events.NewChainKeys()
			if err != nil {
				b.Fatal(err)
			}
			store := memstore.New(memstore.WithChainKeys(keys))
			benchRecord(b, store, recordedRun(b, store, wl.calls))
			if wl.calls > 1 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(wl.calls), "ns/call")
			}
		})
	}
}

// benchRecord records run b.N times, each in a new session of store.
func benchRecord(b *testing.B, store events.Store, run []record) {
	ctx := context.Background()
	steps := floorSteps(run)
	lat := make([]time.Duration, 0, b.N)
	recs := make([]record, 0, len(run))
	batch := make([]events.Event, 0, len(run))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		sid := "floor-" + strconv.Itoa(i)
		stream := events.SessionStream(sid)
		st := NewSessionState(sid)
		for _, step := range steps {
			recs, batch = recs[:0], batch[:0]
			for _, ev := range run[step[0]:step[1]] {
				rec := newRecord(ev.Type, sid, ev.RunID, ev.ToolCallID, ev.data)
				rec.extra = ev.extra
				recs = append(recs, rec)
				batch = append(batch, rec.Event)
			}
			res, err := store.Append(ctx, stream, events.Exact(st.Version), batch...)
			if err != nil {
				b.Fatal(err)
			}
			for j := range recs {
				recs[j].Version = res.FirstVersion + uint64(j)
				if err := st.applyHashed(recs[j], res.Hashes[j]); err != nil {
					b.Fatal(err)
				}
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// floorSteps cuts run into the appends the session actor makes, as index
// ranges, at their fewest: the run's start with the first model request;
// the response with its calls and the usage; each call's start and return
// (the last one with the next model request); the final response, usage
// and completion. For a one-call run these are the four appends
// TestFusedAppendsOfAOneCallRun sees.
func floorSteps(run []record) [][2]int {
	var steps [][2]int
	from := 0
	for i, ev := range run {
		var next events.Type
		if i+1 < len(run) {
			next = run[i+1].Type
		}
		end := next == ""
		switch ev.Type {
		case events.TypeModelRequest:
			end = true
		case events.TypeUsageSnapshot:
			end = end || next != events.TypeRunCompleted
		case events.TypeToolReturned:
			end = end || next != events.TypeModelRequest
		}
		if end {
			steps = append(steps, [2]int{from, i + 1})
			from = i + 1
		}
	}
	return steps
}

// recordedRun runs an agent whose model asks for calls calls of tool echo
// on store and returns the run's events as records: data decoded to its
// struct, and the typed value the session actor keeps beside it (see
// record.extra).
func recordedRun(tb testing.TB, store events.Store, calls int) []record {
	h := fuseHost(tb, store, calls)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(context.Background(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		tb.Fatal(err)
	}
	if o := waitOutcome(tb, outcomes); o.Status != StatusCompleted {
		tb.Fatalf("outcome %s (%v)", o.Status, o.Error)
	}
	evs, err := store.ReadStream(context.Background(), events.SessionStream("s1"), 0)
	if err != nil {
		tb.Fatal(err)
	}
	if want := 8 + 3*calls; len(evs) != want {
		tb.Fatalf("a run of %d calls recorded %d events, want %d", calls, len(evs), want)
	}
	recs := make([]record, len(evs))
	for i, ev := range evs {
		d, err := events.Decode(ev)
		if err != nil {
			tb.Fatal(err)
		}
		// The actor's records carry data structs by value.
		d = reflect.Indirect(reflect.ValueOf(d)).Interface()
		recs[i] = record{Event: ev, data: d, extra: extraOf(tb, d)}
	}
	return recs
}

// extraOf decodes the nested value a record of data carries beside it.
func extraOf(tb testing.TB, data any) any {
	var raw json.RawMessage
	var v any
	switch d := data.(type) {
	case events.RunStarted:
		raw, v = d.Input, new(string)
	case events.ModelResponse:
		raw, v = d.Message, new(llm.Message)
	case events.ToolReturned:
		raw, v = d.Return, new(toolsets.Return)
	case events.RunCompleted:
		raw, v = d.Output, new(string)
	default:
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		tb.Fatal(err)
	}
	switch x := v.(type) {
	case *string:
		return *x
	case *llm.Message:
		return *x
	case *toolsets.Return:
		return *x
	}
	return nil
}
