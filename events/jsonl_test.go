package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// history returns a small recorded history, as a store returns it.
func history(t *testing.T) []events.Event {
	t.Helper()
	at := time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)
	big := events.ToolReturned{Tool: "read", Return: json.RawMessage(`"` + strings.Repeat("x", 200_000) + `"`)}
	var evs []events.Event
	for i, data := range []any{
		events.RunStarted{Agent: "a"},
		events.ToolRequested{Tool: "t", Arguments: json.RawMessage(`{"q":"<a href='x'>&amp;</a>"}`)},
		big,
		events.RunCompleted{},
	} {
		typ := map[int]events.Type{0: events.TypeRunStarted, 1: events.TypeToolRequested, 2: events.TypeToolReturned, 3: events.TypeRunCompleted}[i]
		ev := events.MustNew(typ, data, events.WithTime(at.Add(time.Duration(i)*time.Second)), events.WithSession("s1"))
		ev.Stream, ev.Version, ev.Position = events.SessionStream("s1"), uint64(i+1), uint64(10*(i+1))
		evs = append(evs, ev)
	}
	return evs
}

func TestJSONLRoundTrip(t *testing.T) {
	evs := history(t)
	var buf bytes.Buffer
	if err := events.WriteJSONL(&buf, evs); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != len(evs) {
		t.Errorf("wrote %d lines for %d events", n, len(evs))
	}
	if !bytes.Contains(buf.Bytes(), []byte(`<a href='x'>&amp;</a>`)) {
		t.Errorf("HTML characters in data were escaped:\n%.300s", buf.String())
	}
	got, err := events.ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs, got); diff != "" {
		t.Errorf("ReadJSONL (-want +got):\n%.2000s", diff)
	}
	// Writing what was read gives the same bytes (golden files are stable).
	var again bytes.Buffer
	if err := events.WriteJSONL(&again, got); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	events.WriteJSONL(&first, evs)
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Error("re-writing a read history changed its bytes")
	}
}

func TestReadJSONLBlankLinesAndNoFinalNewline(t *testing.T) {
	var buf bytes.Buffer
	events.WriteJSONL(&buf, history(t)[:2])
	text := "\n" + strings.Replace(buf.String(), "\n", "\n  \n", 1)
	text = strings.TrimSuffix(text, "\n")
	got, err := events.ReadJSONL(strings.NewReader(text))
	if err != nil || len(got) != 2 {
		t.Errorf("ReadJSONL = %d events, %v; want 2", len(got), err)
	}
	empty, err := events.ReadJSONL(strings.NewReader(""))
	if err != nil || len(empty) != 0 {
		t.Errorf("ReadJSONL of nothing = %v, %v", empty, err)
	}
}

func TestReadJSONLErrors(t *testing.T) {
	var buf bytes.Buffer
	events.WriteJSONL(&buf, history(t)[:1])
	good := strings.TrimSuffix(buf.String(), "\n")
	cases := []struct {
		name, line string
	}{
		{"not JSON", `hello`},
		{"unknown field", strings.Replace(good, `"stream"`, `"colour":"red","stream"`, 1)},
		{"wrong field type", strings.Replace(good, `"version":1`, `"version":"1"`, 1)},
		{"negative version", strings.Replace(good, `"version":1`, `"version":-1`, 1)},
		{"bad id", strings.Replace(good, `"id":"`, `"id":"x`, 1)},
		{"bad time", strings.Replace(good, `"time":"2025`, `"time":"yesterday`, 1)},
		{"no id", `{"type":"run.started","schema_version":1}`},
		{"no type", strings.Replace(good, `"type":"run.started",`, ``, 1)},
		{"invalid stream", strings.Replace(good, `"stream":"session-s1"`, `"stream":"a b"`, 1)},
		{"array", `[]`},
		{"two objects", good + good},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.line == good {
				t.Fatal("the case does not change the line")
			}
			_, err := events.ReadJSONL(strings.NewReader(good + "\n" + tc.line + "\n"))
			if !errors.Is(err, events.ErrMalformed) || !strings.Contains(err.Error(), "line 2") {
				t.Errorf("ReadJSONL: %v, want ErrMalformed on line 2", err)
			}
		})
	}
}
