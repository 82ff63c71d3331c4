package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-run/weft/events"
)

// returned is a tool.returned event built by New: its Data is sealed.
func returned(t *testing.T) events.Event {
	t.Helper()
	ev, err := events.New(events.TypeToolReturned, events.ToolReturned{Tool: "tool", Return: json.RawMessage(`{"ok":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestPrepareAppendSkipsSealedDecode: PrepareAppend neither validates nor
// decodes sealed Data again, which shows as fewer allocations than for the
// same bytes built by hand (which it decodes strictly).
func TestPrepareAppendSkipsSealedDecode(t *testing.T) {
	sealed := returned(t)
	byHand := sealed
	byHand.Data = bytes.Clone(sealed.Data)
	allocs := func(ev events.Event) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, err := events.PrepareAppend("session-s", []events.Event{ev}, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
	if s, h := allocs(sealed), allocs(byHand); s >= h {
		t.Errorf("PrepareAppend of sealed data: %.0f allocations, of the same data built by hand: %.0f; want fewer", s, h)
	}
}

// TestSealedDataAltered: Data that is not exactly what NewData sealed for
// the event's type and schema version is checked as any other and refused
// with the same errors: altered in place, resliced, appended to, moved to
// another type or version, or given another's seal.
func TestSealedDataAltered(t *testing.T) {
	cases := []struct {
		name  string
		alter func(ev *events.Event)
		also  error // the decoding sentinel the error matches too, if any
	}{
		{"unknown field written in place", func(ev *events.Event) {
			copy(ev.Data[bytes.Index(ev.Data, []byte(`"tool"`)):], `"TOOL"`)
		}, events.ErrMalformed},
		{"wrong field type written in place", func(ev *events.Event) {
			i := bytes.Index(ev.Data, []byte(`"tool"`))
			copy(ev.Data[i+len(`"tool":`):], `123456`) // as long as `"tool"`
		}, events.ErrMalformed},
		{"invalid JSON written in place", func(ev *events.Event) { ev.Data[len(ev.Data)-1] = ' ' }, nil},
		{"resliced", func(ev *events.Event) { ev.Data = ev.Data[:len(ev.Data)-1] }, nil},
		{"appended to", func(ev *events.Event) { ev.Data = append(ev.Data, `,"x":1}`...) }, nil},
		{"moved to another type", func(ev *events.Event) { ev.Type = events.TypeRunStarted }, events.ErrMalformed},
		{"moved to another schema version", func(ev *events.Event) { ev.SchemaVersion = 99 }, events.ErrUnknownSchemaVersion},
		{"given the seal of other data", func(ev *events.Event) {
			bad := []byte(`{"tool":"tool","retrun":{"ok":true}}`) // as long as the sealed data
			if len(bad) != len(ev.Data) {
				panic("the forged data must be as long as the sealed one")
			}
			seal := ev.Data[len(ev.Data):cap(ev.Data)]
			ev.Data = append(append(make([]byte, 0, len(bad)+len(seal)), bad...), seal...)[:len(bad)]
		}, events.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := returned(t)
			if _, err := events.PrepareAppend("session-s", []events.Event{ev}, 0); err != nil {
				t.Fatalf("the sealed event before it is altered: %v", err)
			}
			tc.alter(&ev)
			_, err := events.PrepareAppend("session-s", []events.Event{ev}, 0)
			if !errors.Is(err, events.ErrInvalidEvent) {
				t.Fatalf("PrepareAppend of altered sealed data %s: %v, want ErrInvalidEvent", ev.Data, err)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("PrepareAppend: %v, want it to match %v too", err, tc.also)
			}
			// The same bytes built by hand get the same error.
			byHand := ev
			byHand.Data = bytes.Clone(ev.Data)
			_, want := events.PrepareAppend("session-s", []events.Event{byHand}, 0)
			if want == nil || err.Error() != want.Error() {
				t.Errorf("altered sealed data: %v; the same data built by hand: %v", err, want)
			}
		})
	}
}

func TestNewDataErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  events.Type
		data any
		want error
	}{
		{"type outside the catalogue", "tool.returnd", events.ToolReturned{}, events.ErrUnknownType},
		{"data of another struct", events.TypeToolReturned, events.RunStarted{}, events.ErrMalformed},
		{"nil pointer", events.TypeToolReturned, (*events.ToolReturned)(nil), events.ErrMalformed},
		{"data that does not encode", events.TypeToolReturned, events.ToolReturned{Return: json.RawMessage(`{`)}, events.ErrMalformed},
	}
	for _, tc := range cases {
		if _, err := events.NewData(tc.typ, tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: NewData: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A pointer to the struct is as good as the value.
	v, err := events.NewData(events.TypeToolReturned, &events.ToolReturned{Tool: "t"})
	if err != nil || string(v) != `{"tool":"t","return":null}` {
		t.Errorf("NewData of a pointer = %s, %v", v, err)
	}
}
