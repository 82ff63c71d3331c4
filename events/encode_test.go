package events_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// TestAppendJSON: the hand-written envelope encoder gives what
// json.Marshal gives, with and without the position member.
func TestAppendJSON(t *testing.T) {
	full := events.Event{
		ID: uuid.MustParse("01a2274e-0000-7000-8000-000000000001"), Stream: "session-a.b", Version: 7, Position: 42,
		Type: events.TypeToolReturned, SchemaVersion: 1, Time: time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC),
		SessionID: "a.b", RunID: "r", ToolCallID: "call<&>\"1\"", CorrelationID: "c", CausationID: "d",
		PrevHash: "ab12", KeyID: "0123456789abcdef", MAC: "cd34", Data: json.RawMessage(`{"tool":"x","n":1}`),
	}
	tests := []struct {
		name string
		ev   events.Event
	}{
		{"every field", full},
		{"no optional fields", events.Event{ID: full.ID, Stream: "s", Type: events.TypeRunStarted, Time: full.Time}},
		{"non-ASCII and control characters", events.Event{ID: full.ID, Stream: "sé\tx", Type: events.TypeRunStarted, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := events.AppendJSON(nil, &tc.ev, true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("AppendJSON(position) =\n%s\nwant\n%s", got, want)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(want, &m); err != nil {
				t.Fatal(err)
			}
			noPos, err := events.AppendJSON(nil, &tc.ev, false)
			if err != nil {
				t.Fatal(err)
			}
			var g map[string]json.RawMessage
			if err := json.Unmarshal(noPos, &g); err != nil {
				t.Fatalf("AppendJSON(no position) is not JSON: %v\n%s", err, noPos)
			}
			if _, ok := g["position"]; ok || len(g) != len(m)-1 {
				t.Errorf("AppendJSON(no position) = %s, want the envelope without position", noPos)
			}
		})
	}
	bad := full
	bad.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := events.AppendJSON(nil, &bad, true); err == nil {
		t.Error("AppendJSON of a year-10000 time: no error, want json.Marshal's refusal")
	}
}

// TestSizeHint: an envelope with every member at its largest (numbers at
// their maximum, a time with a zone offset and nanoseconds, long strings
// that need no escaping) fits the hinted capacity.
func TestSizeHint(t *testing.T) {
	long := strings.Repeat("x", 200)
	ev := events.Event{
		ID: uuid.MustParse("01a2274e-0000-7000-8000-000000000001"), Stream: "session-" + long, Version: math.MaxUint64,
		Position: math.MaxUint64, Type: events.TypeToolReturned, SchemaVersion: math.MinInt,
		Time:      time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.FixedZone("x", -(9*3600+30*60))),
		SessionID: long, RunID: long, ToolCallID: long, CorrelationID: long, CausationID: long,
		PrevHash: strings.Repeat("f", 64), KeyID: strings.Repeat("e", 16), MAC: strings.Repeat("d", 64),
		Data: json.RawMessage(`{"tool":"` + long + `"}`),
	}
	for _, withPosition := range []bool{true, false} {
		hint := events.SizeHint(&ev)
		got, err := events.AppendJSON(make([]byte, 0, hint), &ev, withPosition)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > hint {
			t.Errorf("AppendJSON(position %v) is %d bytes, SizeHint says %d", withPosition, len(got), hint)
		}
	}
	min := events.Event{ID: ev.ID, Stream: "s", Type: events.TypeRunStarted, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if got, err := events.AppendJSON(nil, &min, true); err != nil || len(got) > events.SizeHint(&min) {
		t.Errorf("AppendJSON(minimal) = %d bytes (%v), SizeHint says %d", len(got), err, events.SizeHint(&min))
	}
}
