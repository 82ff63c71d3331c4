package events_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func TestPrepareAppend(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2024, 2, 3, 4, 5, 6, 7, time.FixedZone("x", 3600))
	in := []events.Event{
		{Type: events.TypeRunStarted, Stream: "junk", Version: 9, Position: 9, Data: json.RawMessage(`{}`)},
		{ID: id, Type: events.TypeRunStarted, SchemaVersion: 1, Time: at, Data: json.RawMessage(`{"agent":"a"}`)},
	}
	before := time.Now()
	out, err := events.PrepareAppend("s", in, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range out {
		if ev.Stream != "s" || ev.Version != 0 || ev.Position != 0 {
			t.Errorf("event %d: stream %q version %d position %d", i, ev.Stream, ev.Version, ev.Position)
		}
	}
	if out[0].ID.Version() != 7 || out[0].Time.Before(before) || out[0].Time.Location() != time.UTC || out[0].SchemaVersion != 1 {
		t.Errorf("filled event = %+v", out[0])
	}
	if out[1].ID != id || !out[1].Time.Equal(at) || out[1].SchemaVersion != 1 {
		t.Errorf("set fields were changed: %+v", out[1])
	}
	in[0].Data[0] = 'X'
	if string(out[0].Data) != `{}` {
		t.Error("PrepareAppend did not copy Data")
	}
}

func TestPrepareAppendErrors(t *testing.T) {
	dup := uuid.Must(uuid.NewV7())
	ok := events.Event{Type: events.TypeRunStarted}
	cases := []struct {
		name   string
		stream string
		evs    []events.Event
		max    int
		want   error
		// also, when set: the decoding sentinel the error matches too
		also error
	}{
		{"invalid stream", "a b", []events.Event{ok}, 0, events.ErrInvalidStream, nil},
		{"no events", "s", nil, 0, events.ErrEmptyAppend, nil},
		{"no type", "s", []events.Event{ok, {}}, 0, events.ErrInvalidEvent, nil},
		{"invalid JSON data", "s", []events.Event{{Type: events.TypeRunStarted, Data: json.RawMessage(`{`)}}, 0, events.ErrInvalidEvent, nil},
		{"same id twice", "s", []events.Event{{ID: dup, Type: events.TypeRunStarted}, {ID: dup, Type: events.TypeRunStarted}}, 0, events.ErrInvalidEvent, nil},
		{"data over the limit", "s", []events.Event{{Type: events.TypeRunCancelled, Data: json.RawMessage(`{"by":"abcd"}`)}}, 12, events.ErrPayloadTooLarge, nil},
		{"data over the default limit", "s", []events.Event{{Type: events.TypeRunCancelled, Data: json.RawMessage(`{"by":"` + strings.Repeat("a", events.DefaultMaxDataBytes) + `"}`)}}, 0, events.ErrPayloadTooLarge, nil},
		// The catalogue: a store refuses what its readers could not decode.
		{"type outside the catalogue", "s", []events.Event{ok, {Type: "custom.type"}}, 0, events.ErrInvalidEvent, events.ErrUnknownType},
		{"type with a typo", "s", []events.Event{{Type: "run.startd"}}, 0, events.ErrInvalidEvent, events.ErrUnknownType},
		{"unknown schema version", "s", []events.Event{{Type: events.TypeRunStarted, SchemaVersion: 3}}, 0, events.ErrInvalidEvent, events.ErrUnknownSchemaVersion},
		{"data of another shape", "s", []events.Event{{Type: events.TypeRunStarted, Data: json.RawMessage(`{"agent":7}`)}}, 0, events.ErrInvalidEvent, events.ErrMalformed},
		{"unknown field", "s", []events.Event{{Type: events.TypeRunStarted, Data: json.RawMessage(`{"agnet":"a"}`)}}, 0, events.ErrInvalidEvent, events.ErrMalformed},
		{"data not an object", "s", []events.Event{{Type: events.TypeToolReturned, Data: json.RawMessage(`"not an object"`)}}, 0, events.ErrInvalidEvent, events.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.PrepareAppend(tc.stream, tc.evs, tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("PrepareAppend: %v, want %v", err, tc.want)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("PrepareAppend: %v, want it to match %v too", err, tc.also)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Op != "append" || e.Stream != tc.stream {
				t.Errorf("error %#v is not an *events.Error for append to %q", err, tc.stream)
			}
		})
	}
	if _, err := events.PrepareAppend("s", []events.Event{{Type: events.TypeRunCancelled, Data: json.RawMessage(`{"by":"abc"}`)}}, 12); err != nil {
		t.Errorf("data at the limit: %v", err)
	}
}

// BenchmarkPrepareAppend measures the checks of one append of a typical
// small tool return, the catalogue check (Decode) included.
func BenchmarkPrepareAppend(b *testing.B) {
	ev := events.Event{Type: events.TypeToolReturned, SessionID: "bench",
		Data: json.RawMessage(`{"tool":"search","return":{"content":[{"type":"text","text":"three results found for the query, the first of which is the one you want"}]},"attempt":1}`)}
	evs := []events.Event{ev}
	for b.Loop() {
		if _, err := events.PrepareAppend("session-bench", evs, 0); err != nil {
			b.Fatal(err)
		}
	}
}
