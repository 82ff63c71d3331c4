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

// BenchmarkRecordFloor measures what recording a one-call run costs on
// its own, with no actor, mailbox, goroutine, model or tool: the eleven
// events of a real one-call run (taken from the log of one run on a host,
// with the typed values the session actor keeps beside them) built again
// with newRecord for a new session each run, appended to a keyed memstore
// in the four steps the session actor appends them in (see
// TestFusedAppendsOfAOneCallRun), and folded with the hashes the store
// returns, as the actor does. It is the floor, on the memory store, of
// what the runtime promises for every event (encoded, sealed, hashed into
// the keyed chain, kept, indexed by id for idempotency, folded), which the
// root package's BenchmarkWorkload/W1/memory/new-session cannot go under:
//
//	go test -run '^$' -bench BenchmarkRecordFloor -benchtime=20000x -benchmem ./actors
//
// It reports p50-µs per run besides ns/op and allocs/op; timings are
// reported, never asserted.
func BenchmarkRecordFloor(b *testing.B) {
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	store := memstore.New(memstore.WithChainKeys(keys))
	run := recordedOneCallRun(b, store)
	ctx := context.Background()
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
		for _, step := range oneCallSteps {
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

// oneCallSteps are the appends of a one-call run, as index ranges of its
// events: the run's start with the first model request; the response with
// its call and the usage; the call's start and return with the next
// request; the final response, usage and completion.
var oneCallSteps = [][2]int{{0, 2}, {2, 5}, {5, 8}, {8, 11}}

// oneCallTypes are the event types of a one-call run, in order.
var oneCallTypes = []events.Type{
	events.TypeRunStarted, events.TypeModelRequest,
	events.TypeModelResponse, events.TypeToolRequested, events.TypeUsageSnapshot,
	events.TypeToolStarted, events.TypeToolReturned, events.TypeModelRequest,
	events.TypeModelResponse, events.TypeUsageSnapshot, events.TypeRunCompleted,
}

// recordedOneCallRun runs one call of fuseHost's agent on store and returns
// its events as records: data decoded to its struct, and the typed value
// the session actor keeps beside it (see record.extra).
func recordedOneCallRun(tb testing.TB, store events.Store) []record {
	h := fuseHost(tb, store)
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
	recs := make([]record, len(evs))
	var types []events.Type
	for i, ev := range evs {
		d, err := events.Decode(ev)
		if err != nil {
			tb.Fatal(err)
		}
		// The actor's records carry data structs by value.
		d = reflect.Indirect(reflect.ValueOf(d)).Interface()
		recs[i] = record{Event: ev, data: d, extra: extraOf(tb, d)}
		types = append(types, ev.Type)
	}
	if !slices.Equal(types, oneCallTypes) {
		tb.Fatalf("a one-call run recorded %v, want %v", types, oneCallTypes)
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
