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
		{ID: id, Type: events.TypeRunStarted, SchemaVersion: 3, Time: at},
		{Type: "custom.type"},
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
	if out[1].ID != id || !out[1].Time.Equal(at) || out[1].SchemaVersion != 3 {
		t.Errorf("set fields were changed: %+v", out[1])
	}
	if out[2].SchemaVersion != 0 {
		t.Errorf("schema version of a type outside the catalogue filled with %d", out[2].SchemaVersion)
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
	}{
		{"invalid stream", "a b", []events.Event{ok}, 0, events.ErrInvalidStream},
		{"no events", "s", nil, 0, events.ErrEmptyAppend},
		{"no type", "s", []events.Event{ok, {}}, 0, events.ErrInvalidEvent},
		{"invalid JSON data", "s", []events.Event{{Type: "x", Data: json.RawMessage(`{`)}}, 0, events.ErrInvalidEvent},
		{"same id twice", "s", []events.Event{{ID: dup, Type: "x"}, {ID: dup, Type: "x"}}, 0, events.ErrInvalidEvent},
		{"data over the limit", "s", []events.Event{{Type: "x", Data: json.RawMessage(`"abcd"`)}}, 5, events.ErrPayloadTooLarge},
		{"data over the default limit", "s", []events.Event{{Type: "x", Data: json.RawMessage(`"` + strings.Repeat("a", events.DefaultMaxDataBytes) + `"`)}}, 0, events.ErrPayloadTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.PrepareAppend(tc.stream, tc.evs, tc.max)
			if !errors.Is(err, tc.want) {
				t.Fatalf("PrepareAppend: %v, want %v", err, tc.want)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Op != "append" || e.Stream != tc.stream {
				t.Errorf("error %#v is not an *events.Error for append to %q", err, tc.stream)
			}
		})
	}
	if _, err := events.PrepareAppend("s", []events.Event{{Type: "x", Data: json.RawMessage(`"abc"`)}}, 5); err != nil {
		t.Errorf("data at the limit: %v", err)
	}
}
