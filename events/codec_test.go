package events_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func TestNew(t *testing.T) {
	before := time.Now()
	ev, err := events.New(events.TypeToolReturned, events.ToolReturned{Tool: "t", Return: json.RawMessage(`{"a":"<&>"}`)},
		events.WithSession("s"), events.WithRun("r"), events.WithToolCall("c"),
		events.WithCorrelation("corr"), events.WithCausation("cause"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID.Version() != 7 {
		t.Errorf("ID %s is not a UUIDv7", ev.ID)
	}
	if ev.Time.Before(before) || ev.Time.After(time.Now()) || ev.Time.Location() != time.UTC {
		t.Errorf("Time %v is not now in UTC", ev.Time)
	}
	want := events.Event{
		ID: ev.ID, Time: ev.Time, Type: events.TypeToolReturned, SchemaVersion: 1,
		SessionID: "s", RunID: "r", ToolCallID: "c", CorrelationID: "corr", CausationID: "cause",
		Data: json.RawMessage(`{"tool":"t","return":{"a":"<&>"}}`),
	}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}

	zero, err := events.New(events.TypeRunResumed, nil)
	if err != nil || string(zero.Data) != `{}` {
		t.Errorf("New with nil data = %s, %v; want {}", zero.Data, err)
	}
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	fixed := events.MustNew(events.TypeRunResumed, nil, events.WithID(id), events.WithTime(at))
	if fixed.ID != id || !fixed.Time.Equal(at) {
		t.Errorf("WithID/WithTime: got %s %v", fixed.ID, fixed.Time)
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  events.Type
		data any
		want error
	}{
		{"unknown type", "run.exploded", events.RunStarted{}, events.ErrUnknownType},
		{"empty type", "", nil, events.ErrUnknownType},
		{"data of another type", events.TypeRunStarted, events.RunFailed{}, events.ErrMalformed},
		{"raw JSON data", events.TypeRunStarted, json.RawMessage(`{}`), events.ErrMalformed},
		{"map data", events.TypeRunStarted, map[string]any{"agent": "a"}, events.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.New(tc.typ, tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("New: %v, want %v", err, tc.want)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Op != "new event" {
				t.Errorf("New error %v is not an *events.Error with Op \"new event\"", err)
			}
		})
	}
}

func TestWithCause(t *testing.T) {
	cause := events.MustNew(events.TypeToolRequested, events.ToolRequested{Tool: "t"},
		events.WithSession("s"), events.WithRun("r"), events.WithToolCall("c"))
	ev := events.MustNew(events.TypeToolStarted, events.ToolStarted{Tool: "t", Attempt: 1}, events.WithCause(cause))
	if ev.CausationID != cause.ID.String() || ev.CorrelationID != cause.ID.String() {
		t.Errorf("first effect: causation %q correlation %q, want both %s", ev.CausationID, ev.CorrelationID, cause.ID)
	}
	if ev.SessionID != "s" || ev.RunID != "r" || ev.ToolCallID != "c" {
		t.Errorf("ids not copied from the cause: %q %q %q", ev.SessionID, ev.RunID, ev.ToolCallID)
	}
	next := events.MustNew(events.TypeToolReturned, events.ToolReturned{Tool: "t"}, events.WithCause(ev), events.WithToolCall("c2"))
	if next.CausationID != ev.ID.String() || next.CorrelationID != cause.ID.String() || next.ToolCallID != "c2" {
		t.Errorf("second effect: causation %q correlation %q tool call %q", next.CausationID, next.CorrelationID, next.ToolCallID)
	}
}

func TestDecodeErrors(t *testing.T) {
	ev := func(typ events.Type, version int, data string) events.Event {
		return events.Event{Stream: "session-1", Type: typ, SchemaVersion: version, Data: json.RawMessage(data)}
	}
	cases := []struct {
		name string
		ev   events.Event
		want error
	}{
		{"unknown type", ev("run.exploded", 1, `{}`), events.ErrUnknownType},
		{"empty type", ev("", 1, `{}`), events.ErrUnknownType},
		{"schema version zero", ev(events.TypeRunStarted, 0, `{}`), events.ErrUnknownSchemaVersion},
		{"future schema version", ev(events.TypeRunStarted, 2, `{}`), events.ErrUnknownSchemaVersion},
		{"negative schema version", ev(events.TypeRunStarted, -1, `{}`), events.ErrUnknownSchemaVersion},
		{"invalid JSON", ev(events.TypeRunStarted, 1, `{"agent":`), events.ErrMalformed},
		{"wrong field type", ev(events.TypeRunStarted, 1, `{"agent":7}`), events.ErrMalformed},
		{"wrong nested field type", ev(events.TypeRunFailed, 1, `{"error":{"message":["x"]}}`), events.ErrMalformed},
		{"unknown field", ev(events.TypeRunStarted, 1, `{"agent":"a","colour":"red"}`), events.ErrMalformed},
		{"unknown nested field", ev(events.TypeRunFailed, 1, `{"error":{"message":"x","code":1}}`), events.ErrMalformed},
		{"trailing data", ev(events.TypeRunStarted, 1, `{} {}`), events.ErrMalformed},
		{"trailing garbage", ev(events.TypeRunStarted, 1, `{}x`), events.ErrMalformed},
		{"array", ev(events.TypeRunStarted, 1, `[]`), events.ErrMalformed},
		{"null", ev(events.TypeRunStarted, 1, `null`), events.ErrMalformed},
		{"string", ev(events.TypeRunStarted, 1, `"run"`), events.ErrMalformed},
		{"integer overflow", ev(events.TypeUsageSnapshot, 1, `{"usage":{"requests":1e30}}`), events.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := events.Decode(tc.ev)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, %v; want %v", got, err, tc.want)
			}
			var e *events.Error
			if !errors.As(err, &e) || e.Op != "decode" || e.Stream != "session-1" {
				t.Errorf("Decode error %#v is not an *events.Error for decode of session-1", err)
			}
		})
	}
}

func TestDecodeEmptyData(t *testing.T) {
	for _, data := range []string{"", "  ", "{}"} {
		got, err := events.Decode(events.Event{Type: events.TypeRunResumed, SchemaVersion: 1, Data: json.RawMessage(data)})
		if err != nil || !cmp.Equal(got, events.RunResumed{}) {
			t.Errorf("Decode(%q) = %#v, %v; want the zero RunResumed", data, got, err)
		}
	}
}

func TestDecodeAs(t *testing.T) {
	ev := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t", Progress: 0.5})
	got, err := events.DecodeAs[events.ToolProgress](ev)
	if err != nil || got.Tool != "t" || got.Progress != 0.5 {
		t.Errorf("DecodeAs[ToolProgress] = %+v, %v", got, err)
	}
	if _, err := events.DecodeAs[events.ToolReturned](ev); !errors.Is(err, events.ErrMalformed) {
		t.Errorf("DecodeAs[ToolReturned] of a tool.progress event: %v, want ErrMalformed", err)
	}
	ev.Type = "tool.unknown"
	if _, err := events.DecodeAs[events.ToolProgress](ev); !errors.Is(err, events.ErrUnknownType) {
		t.Errorf("DecodeAs of an unknown type: %v, want ErrUnknownType", err)
	}
}

// TestDecodeExactKeys: keys that match a field only case-insensitively are
// unknown fields, at any depth.
func TestDecodeExactKeys(t *testing.T) {
	cases := []struct {
		name string
		typ  events.Type
		data string
	}{
		{"top level", events.TypeRunStarted, `{"Agent":"a"}`},
		{"nested struct", events.TypeRunFailed, `{"error":{"Message":"m"}}`},
		{"through a pointer", events.TypeRunCompleted, `{"usage":{"Requests":1}}`},
		{"inside a map value", events.TypeUsageSnapshot, `{"usage":{"details":{"x":1},"Details":{}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.Decode(events.Event{Type: tc.typ, SchemaVersion: 1, Data: json.RawMessage(tc.data)})
			if !errors.Is(err, events.ErrMalformed) {
				t.Errorf("Decode(%s): %v, want ErrMalformed", tc.data, err)
			}
		})
	}
	// Raw JSON fields are not checked: their content belongs to others.
	if _, err := events.Decode(events.Event{Type: events.TypeRunStarted, SchemaVersion: 1, Data: json.RawMessage(`{"input":{"Agent":1}}`)}); err != nil {
		t.Errorf("Decode with free-form raw JSON: %v", err)
	}
	if _, err := events.ParseEvent([]byte(`{"ID":"0192d6a0-0000-7000-8000-000000000000","type":"run.started"}`)); !errors.Is(err, events.ErrMalformed) {
		t.Errorf("ParseEvent with key \"ID\": %v, want ErrMalformed", err)
	}
}
