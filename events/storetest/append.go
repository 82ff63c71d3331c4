package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// testRoundTrip: every envelope field survives, versions run 1..n,
// positions increase, and ID, Time and SchemaVersion are filled when zero.
func testRoundTrip(f *fixture) {
	t := f.t
	stream := f.stream("round-trip")
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)
	full := events.Event{
		ID:            uuid.Must(uuid.NewV7()),
		Type:          events.TypeRunStarted,
		SchemaVersion: 1,
		Time:          at,
		SessionID:     "sess-1",
		RunID:         "run-1",
		ToolCallID:    "call-1",
		CorrelationID: "corr-1",
		CausationID:   "cause-1",
		Data:          []byte(`{"agent":"planner","input":{"q":"héllo ✓","n":[1,2.5,null,true]}}`),
	}
	// Zero ID, Time and SchemaVersion to be filled; Stream, Version and
	// Position set to junk that the store must overwrite.
	bare := events.Event{
		Stream:   "elsewhere",
		Version:  99,
		Position: 99,
		Type:     events.TypeToolReturned,
		Data:     []byte(`{"tool":"t","return":{"ok":true}}`),
	}
	noData := events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeUsageSnapshot, SchemaVersion: 1, Time: at}
	later := event(events.TypeRunCompleted, 4)
	later.Time = at.Add(time.Second)
	later.SchemaVersion = 1

	before := time.Now()
	res1 := f.mustAppend(stream, events.NoStream, full, bare, noData)
	after := time.Now()
	res2 := f.mustAppend(stream, events.Exact(3), later)

	if res1.FirstVersion != 1 || res1.LastVersion != 3 || res1.Duplicate {
		t.Errorf("first append result = %+v, want versions 1..3, not duplicate", res1)
	}
	if res2.FirstVersion != 4 || res2.LastVersion != 4 || res2.Duplicate || res2.LastPosition <= res1.LastPosition {
		t.Errorf("second append result = %+v, want version 4 after position %d", res2, res1.LastPosition)
	}

	got := f.readStream(stream, 0)
	if len(got) != 4 {
		t.Fatalf("ReadStream returned %d events, want 4", len(got))
	}
	f.checkPositions("ReadStream", got)
	for i, ev := range got {
		if ev.Stream != stream || ev.Version != uint64(i+1) {
			t.Errorf("event %d: stream %q version %d, want %q version %d", i, ev.Stream, ev.Version, stream, i+1)
		}
	}
	if got[2].Position != res1.LastPosition || got[3].Position != res2.LastPosition {
		t.Errorf("positions %d and %d, want LastPosition %d and %d", got[2].Position, got[3].Position, res1.LastPosition, res2.LastPosition)
	}

	// The filled fields of bare.
	filled := got[1]
	if filled.ID == uuid.Nil || filled.ID.Version() != 7 {
		t.Errorf("filled ID %s is not a UUIDv7", filled.ID)
	}
	const slack = time.Minute // the backend's clock may not be ours
	if filled.Time.Before(before.Add(-slack)) || filled.Time.After(after.Add(slack)) {
		t.Errorf("filled Time %v is not near the append (%v .. %v)", filled.Time, before, after)
	}
	if filled.Time.Location() != time.UTC {
		t.Errorf("filled Time %v is not UTC", filled.Time)
	}
	if v, _ := events.TypeToolReturned.SchemaVersion(); filled.SchemaVersion != v {
		t.Errorf("filled SchemaVersion = %d, want %d", filled.SchemaVersion, v)
	}

	want := []events.Event{full, bare, noData, later}
	want[1].ID, want[1].Time, want[1].SchemaVersion = filled.ID, filled.Time, filled.SchemaVersion
	for i := range want {
		want[i].Stream, want[i].Version, want[i].Position = stream, uint64(i+1), got[i].Position
		if i > 0 {
			want[i].PrevHash = events.Hash(want[i-1])
		}
		if keys := f.opts.ChainKeys; keys != nil {
			want[i].KeyID, want[i].MAC = keys.Current().ID(), keys.Current().MAC(want[i])
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ReadStream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, f.readAll(0), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ReadAll (-want +got):\n%s", diff)
	}
	var sub []events.Event
	f.await("Subscribe", func() {
		for ev, err := range f.s.Subscribe(f.ctx, 0) {
			if err != nil {
				t.Errorf("Subscribe: %v", err)
				return
			}
			if f.mine(ev) {
				sub = append(sub, ev)
			}
			if len(sub) == len(want) {
				return
			}
		}
	})
	if diff := cmp.Diff(want, sub, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Subscribe (-want +got):\n%s", diff)
	}
}

// testExpectedVersion: each kind of expected version is enforced, the
// refusal is a *WrongVersionError with the actual version, and nothing is
// written.
func testExpectedVersion(f *fixture) {
	t := f.t
	existing := f.stream("existing")
	f.mustAppend(existing, events.NoStream, eventsN(1, 3)...)

	wrong := []struct {
		name     string
		stream   string
		expected events.ExpectedVersion
		actual   uint64
	}{
		{"no stream on existing stream", existing, events.NoStream, 3},
		{"exact zero on existing stream", existing, events.Exact(0), 3},
		{"exact too low", existing, events.Exact(2), 3},
		{"exact too high", existing, events.Exact(5), 3},
		{"exact on missing stream", f.stream("missing"), events.Exact(1), 0},
	}
	for _, tc := range wrong {
		t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			total := len(f.readAll(0))
			res, err := f.s.Append(f.ctx, tc.stream, tc.expected, event(events.TypeToolProgress, 9))
			if !errors.Is(err, events.ErrWrongExpectedVersion) {
				t.Fatalf("Append(%v) = %+v, %v; want ErrWrongExpectedVersion", tc.expected, res, err)
			}
			var wv *events.WrongVersionError
			if !errors.As(err, &wv) {
				t.Fatalf("Append(%v) error %v (%T) is not a *WrongVersionError", tc.expected, err, err)
			}
			if wv.Actual != tc.actual || wv.Stream != tc.stream || wv.Expected != tc.expected {
				t.Errorf("WrongVersionError = {Stream %q Expected %v Actual %d}, want {%q %v %d}",
					wv.Stream, wv.Expected, wv.Actual, tc.stream, tc.expected, tc.actual)
			}
			if n := len(f.readAll(0)); n != total {
				t.Errorf("refused append wrote: log has %d events, had %d", n, total)
			}
		})
	}
	if evs := f.readStream(existing, 0); len(evs) != 3 {
		t.Errorf("existing stream has %d events after refused appends, want 3", len(evs))
	}
	if _, err := f.s.ReadStream(f.ctx, f.stream("missing"), 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Errorf("refused append to a missing stream created it: ReadStream error %v", err)
	}

	right := []struct {
		name     string
		stream   string
		expected events.ExpectedVersion
		first    uint64
	}{
		{"any on existing stream", existing, events.Any, 4},
		{"exact current version", existing, events.Exact(4), 5},
		{"any on missing stream", f.stream("any-new"), events.Any, 1},
		{"no stream on missing stream", f.stream("no-stream-new"), events.NoStream, 1},
		{"exact zero on missing stream", f.stream("exact-zero-new"), events.Exact(0), 1},
	}
	for _, tc := range right {
		t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			res, err := f.s.Append(f.ctx, tc.stream, tc.expected, event(events.TypeToolProgress, 1))
			if err != nil {
				t.Fatalf("Append(%v): %v", tc.expected, err)
			}
			if res.FirstVersion != tc.first || res.LastVersion != tc.first {
				t.Errorf("Append(%v) = %+v, want version %d", tc.expected, res, tc.first)
			}
		})
	}
}

// testBatchAllOrNothing: a batch with one bad event writes none of it, and
// its good events can be appended afterwards as new events.
func testBatchAllOrNothing(f *fixture) {
	oversized := event(events.TypeToolProgress, 0)
	oversized.Data = toolData(f.opts.MaxDataBytes + 1)
	untyped := event("", 0)

	cases := []struct {
		name    string
		bad     events.Event
		want    error
		version uint64 // the stream's version before the batch
	}{
		{"oversized event to new stream", oversized, events.ErrPayloadTooLarge, 0},
		{"oversized event to existing stream", oversized, events.ErrPayloadTooLarge, 2},
		{"untyped event to new stream", untyped, events.ErrInvalidEvent, 0},
		{"untyped event to existing stream", untyped, events.ErrInvalidEvent, 2},
	}
	for i, tc := range cases {
		f.t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			stream := f.stream(fmt.Sprintf("batch-%d", i))
			if tc.version > 0 {
				f.mustAppend(stream, events.NoStream, eventsN(1, int(tc.version))...)
			}
			total := len(f.readAll(0))
			good := eventsN(10, 3)
			batch := []events.Event{good[0], good[1], tc.bad, good[2]}
			if _, err := f.s.Append(f.ctx, stream, events.Any, batch...); !errors.Is(err, tc.want) {
				t.Fatalf("Append of a batch with a bad event: %v, want %v", err, tc.want)
			}
			if n := len(f.readAll(0)); n != total {
				t.Errorf("refused batch wrote: log has %d events, had %d", n, total)
			}
			evs, err := f.s.ReadStream(f.ctx, stream, 0)
			switch {
			case tc.version == 0 && !errors.Is(err, events.ErrStreamNotFound):
				t.Errorf("refused batch created the stream: ReadStream = %d events, %v", len(evs), err)
			case tc.version > 0 && (err != nil || uint64(len(evs)) != tc.version):
				t.Errorf("ReadStream after refused batch = %d events, %v; want %d", len(evs), err, tc.version)
			}
			res, err := f.s.Append(f.ctx, stream, events.Exact(tc.version), good...)
			if err != nil {
				t.Fatalf("Append of the good events after the refused batch: %v", err)
			}
			if res.Duplicate || res.FirstVersion != tc.version+1 || res.LastVersion != tc.version+3 {
				t.Errorf("Append of the good events = %+v, want versions %d..%d, not duplicate", res, tc.version+1, tc.version+3)
			}
		})
	}
}

// testIdempotent: re-appending stored ids under the original expected
// version returns the original result, marked Duplicate, and writes
// nothing.
func testIdempotent(f *fixture) {
	cases := []struct {
		name string
		// setup appends the original batch (returned with its expected
		// version and result) and whatever follows it.
		setup func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult)
	}{
		{"batch right after", func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult) {
			evs := eventsN(1, 3)
			return evs, events.NoStream, f.mustAppend(stream, events.NoStream, evs...)
		}},
		{"single event at exact version", func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult) {
			f.mustAppend(stream, events.NoStream, eventsN(1, 2)...)
			ev := event(events.TypeToolProgress, 3)
			return []events.Event{ev}, events.Exact(2), f.mustAppend(stream, events.Exact(2), ev)
		}},
		{"batch under any", func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult) {
			f.mustAppend(stream, events.NoStream, eventsN(1, 1)...)
			evs := eventsN(2, 2)
			return evs, events.Any, f.mustAppend(stream, events.Any, evs...)
		}},
		{"after appends to other streams", func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult) {
			evs := eventsN(1, 2)
			res := f.mustAppend(stream, events.NoStream, evs...)
			f.mustAppend(stream+"-other-a", events.NoStream, eventsN(1, 3)...)
			f.mustAppend(stream+"-other-b", events.Any, eventsN(1, 1)...)
			return evs, events.NoStream, res
		}},
		{"not at the end of the stream", func(f *fixture, stream string) ([]events.Event, events.ExpectedVersion, events.AppendResult) {
			evs := eventsN(1, 2)
			res := f.mustAppend(stream, events.NoStream, evs...)
			f.mustAppend(stream, events.Exact(2), eventsN(3, 2)...)
			return evs, events.NoStream, res
		}},
	}
	for i, tc := range cases {
		f.t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			stream := f.stream(fmt.Sprintf("idem-%d", i))
			evs, expected, orig := tc.setup(f, stream)
			length := len(f.readStream(stream, 0))
			total := len(f.readAll(0))

			for attempt := 1; attempt <= 2; attempt++ {
				res, err := f.s.Append(f.ctx, stream, expected, evs...)
				if err != nil {
					t.Fatalf("re-append %d: %v", attempt, err)
				}
				want := orig
				want.Duplicate = true
				if diff := cmp.Diff(want, res); diff != "" {
					t.Errorf("re-append %d result (-want +got):\n%s", attempt, diff)
				}
			}
			if n := len(f.readStream(stream, 0)); n != length {
				t.Errorf("stream has %d events after re-appends, had %d", n, length)
			}
			if n := len(f.readAll(0)); n != total {
				t.Errorf("log has %d events after re-appends, had %d", n, total)
			}
		})
	}
}

// testConcurrentAppenders: N appenders loop read-version → Append(Exact) →
// retry on conflict; every version is taken exactly once.
func testConcurrentAppenders(f *fixture) {
	t := f.t
	const perAppender = 5
	stream := f.stream("contended")
	n := f.opts.Concurrency
	total := n * perAppender

	var (
		mu       sync.Mutex
		versions []uint64 // every version an appender was told it got
		appended []uuid.UUID
		wg       sync.WaitGroup
		errs     = make(chan error, n)
	)
	for a := range n {
		wg.Go(func() {
			for i := range perAppender {
				ev := event(events.TypeToolProgress, a*perAppender+i)
				res, err := f.appendWithRetry(stream, ev)
				if err != nil {
					errs <- fmt.Errorf("appender %d: %w", a, err)
					return
				}
				mu.Lock()
				versions = append(versions, res.FirstVersion)
				appended = append(appended, ev.ID)
				mu.Unlock()
			}
		})
	}
	f.await("concurrent appenders", wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	slices.Sort(versions)
	want := make([]uint64, total)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("versions reported to appenders (-want +got):\n%s", diff)
	}
	got := f.readStream(stream, 0)
	if len(got) != total {
		t.Fatalf("stream has %d events, want %d", len(got), total)
	}
	for i, ev := range got {
		if ev.Version != uint64(i+1) {
			t.Errorf("stream event %d has version %d", i, ev.Version)
		}
	}
	if err := events.VerifyChain(got); err != nil {
		t.Errorf("hash chain after concurrent appends: %v", err)
	}
	stored := ids(got)
	slices.SortFunc(stored, compareUUID)
	slices.SortFunc(appended, compareUUID)
	if diff := cmp.Diff(appended, stored); diff != "" {
		t.Errorf("stored ids differ from appended ids (-appended +stored):\n%s", diff)
	}
}

// appendWithRetry appends ev at the stream's current version, re-reading
// the version and retrying while other appenders win.
func (f *fixture) appendWithRetry(stream string, ev events.Event) (events.AppendResult, error) {
	for {
		evs, err := f.s.ReadStream(f.ctx, stream, 0)
		if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
			return events.AppendResult{}, fmt.Errorf("read version: %w", err)
		}
		var version uint64
		if len(evs) > 0 {
			version = evs[len(evs)-1].Version
		}
		res, err := f.s.Append(f.ctx, stream, events.Exact(version), ev)
		if err == nil {
			if res.Duplicate || res.FirstVersion != version+1 {
				return res, fmt.Errorf("Append(exact %d) = %+v, want version %d", version, res, version+1)
			}
			return res, nil
		}
		var wv *events.WrongVersionError
		if !errors.As(err, &wv) {
			return res, fmt.Errorf("Append(exact %d): %w", version, err)
		}
		if wv.Actual <= version {
			return res, fmt.Errorf("Append(exact %d) refused with actual version %d, which is not newer", version, wv.Actual)
		}
	}
}

func compareUUID(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }

// testPayloadLimit: Data of MaxDataBytes is accepted, one byte more is
// refused with ErrPayloadTooLarge.
func testPayloadLimit(f *fixture) {
	t := f.t
	stream := f.stream("payload")
	atLimit := event(events.TypeToolReturned, 0)
	atLimit.Data = toolData(f.opts.MaxDataBytes)
	f.mustAppend(stream, events.NoStream, atLimit)
	got := f.readStream(stream, 0)
	if len(got) != 1 || len(got[0].Data) != f.opts.MaxDataBytes {
		t.Errorf("event at the limit read back as %d events, data %d bytes", len(got), len(got[0].Data))
	}

	over := event(events.TypeToolReturned, 0)
	over.Data = toolData(f.opts.MaxDataBytes + 1)
	if _, err := f.s.Append(f.ctx, stream, events.Any, over); !errors.Is(err, events.ErrPayloadTooLarge) {
		t.Errorf("Append of %d bytes of data: %v, want ErrPayloadTooLarge", len(over.Data), err)
	}
	if n := len(f.readStream(stream, 0)); n != 1 {
		t.Errorf("stream has %d events after the refused append, want 1", n)
	}
}

// toolData returns the data of a tool event, {"tool":"xx…"}, of exactly n
// bytes (n >= 11).
func toolData(n int) []byte {
	const head, tail = `{"tool":"`, `"}`
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	copy(b, head)
	copy(b[n-len(tail):], tail)
	return b
}

// testInvalidStreams: names ValidateStream rejects are refused with
// ErrInvalidStream.
func testInvalidStreams(f *fixture) {
	cases := []struct{ name, stream string }{
		{"empty", ""},
		{"space", f.stream("a b")},
		{"leading space", " " + f.stream("a")},
		{"tab", f.stream("a\tb")},
		{"newline", f.stream("a\nb")},
		{"nul", f.stream("a\x00b")},
		{"escape", f.stream("a\x1bb")},
		{"delete", f.stream("a\x7fb")},
		{"no-break space", f.stream("a\u00a0b")},
		{"too long", f.stream(strings.Repeat("x", events.MaxStreamLen))},
		{"invalid UTF-8", f.stream("a\xffb")},
		{"truncated UTF-8", f.stream("a\xc3")},
	}
	for _, tc := range cases {
		f.t.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			if _, err := f.s.Append(f.ctx, tc.stream, events.Any, event(events.TypeToolProgress, 1)); !errors.Is(err, events.ErrInvalidStream) {
				t.Errorf("Append(%q): %v, want ErrInvalidStream", tc.stream, err)
			}
		})
	}
	if evs := f.readAll(0); len(evs) != 0 {
		f.t.Errorf("refused appends wrote %d events", len(evs))
	}
}

// testValidStreams: names with characters that are special to some
// backend (subject tokens, separators, non-ASCII) are accepted, and names
// that an escaping could confuse stay distinct streams.
func testValidStreams(f *fixture) {
	t := f.t
	names := []string{
		"a.b", "a_b", "a-b", "a~b", "a%2Eb", "a%2eb", "a_2Eb", "a.", ".a", "a..b",
		"a*b", "a>b", "a/b", "a\\b", "a:b", "a$b", "a#b", "a@b", "a=b", "a+b",
		"ünï.cödé", "日本語", "emoji-🙂", "A.B", "a\"b", "a'b",
		strings.Repeat("y", events.MaxStreamLen-len(f.prefix)),
	}
	want := make(map[string]uuid.UUID, len(names))
	for _, n := range names {
		stream := f.stream(n)
		ev := event(events.TypeToolProgress, 1)
		f.mustAppend(stream, events.NoStream, ev)
		want[stream] = ev.ID
	}
	for stream, id := range want {
		got := f.readStream(stream, 0)
		if len(got) != 1 || got[0].ID != id || got[0].Stream != stream {
			t.Errorf("ReadStream(%q) = %d events (first %+v), want only event %s", stream, len(got), first(got), id)
		}
	}
	all := f.readAll(0)
	if len(all) != len(names) {
		t.Errorf("ReadAll has %d events, want %d", len(all), len(names))
	}
	for _, ev := range all {
		if want[ev.Stream] != ev.ID {
			t.Errorf("ReadAll: event %s in stream %q, want it in another stream", ev.ID, ev.Stream)
		}
	}
}

func first(evs []events.Event) events.Event {
	if len(evs) == 0 {
		return events.Event{}
	}
	return evs[0]
}

// testEmptyAppend: an append of no events is refused.
func testEmptyAppend(f *fixture) {
	stream := f.stream("empty")
	for _, expected := range []events.ExpectedVersion{events.Any, events.NoStream} {
		if _, err := f.s.Append(f.ctx, stream, expected); !errors.Is(err, events.ErrEmptyAppend) {
			f.t.Errorf("Append(%v) of no events: %v, want ErrEmptyAppend", expected, err)
		}
	}
	if _, err := f.s.ReadStream(f.ctx, stream, 0); !errors.Is(err, events.ErrStreamNotFound) {
		f.t.Errorf("empty append created the stream: ReadStream error %v", err)
	}
}

// testInvalidEvent: an event without a type, and one that readers could
// not decode (a type outside the catalogue, an unknown schema version, data
// of another shape), and one of a type that is never recorded (live model
// output), is refused with ErrInvalidEvent, matching the decoding
// sentinel too, and writes nothing: a store never takes in poison.
func testInvalidEvent(f *fixture) {
	withData := func(typ events.Type, data string) events.Event {
		ev := event(typ, 1)
		ev.Data = json.RawMessage(data)
		return ev
	}
	oldVersion := event(events.TypeToolProgress, 1)
	oldVersion.SchemaVersion = 99
	cases := []struct {
		name string
		ev   events.Event
		also error
	}{
		{"no type", event("", 1), nil},
		{"type outside the catalogue", event("tool.returnd", 1), events.ErrUnknownType},
		{"unknown schema version", oldVersion, events.ErrUnknownSchemaVersion},
		{"field of the wrong type", withData(events.TypeToolReturned, `{"tool":7}`), events.ErrMalformed},
		{"unknown field", withData(events.TypeToolReturned, `{"tool":"t","retrun":{}}`), events.ErrMalformed},
		{"data not an object", withData(events.TypeToolReturned, `"not json"`), events.ErrMalformed},
		{"a member named twice", withData(events.TypeToolReturned, `{"tool":"a","tool":"b"}`), events.ErrMalformed},
		{"a nested member named twice", withData(events.TypeToolReturned, `{"tool":"a","error":{"kind":"x","kind":"y"}}`), events.ErrMalformed},
		{"live output, never recorded", events.MustNew(events.TypeModelDelta, events.ModelDelta{Step: 1, Seq: 1, Text: "Hel"}), nil},
	}
	for i, tc := range cases {
		f.t.Run(tc.name, func(t *testing.T) {
			stream := f.stream(fmt.Sprintf("invalid-%d", i))
			_, err := f.s.Append(f.ctx, stream, events.Any, tc.ev)
			if !errors.Is(err, events.ErrInvalidEvent) {
				t.Errorf("Append: %v, want ErrInvalidEvent", err)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("Append: %v, want it to match %v too", err, tc.also)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Stream != stream {
				t.Errorf("Append: %#v, want an *events.Error naming the stream", err)
			}
			if _, err := f.s.ReadStream(f.ctx, stream, 0); !errors.Is(err, events.ErrStreamNotFound) {
				t.Errorf("refused append created the stream: ReadStream error %v", err)
			}
		})
	}
}
