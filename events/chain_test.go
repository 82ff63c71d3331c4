package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// chained returns a stream of n events chained as a store chains them.
func chained(t *testing.T, stream string, n int) []events.Event {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{
			ID:            uuid.MustParse(fmt.Sprintf("01900000-0000-7000-8000-%012d", i)),
			Stream:        stream,
			Type:          events.TypeToolProgress,
			SchemaVersion: 1,
			Time:          at.Add(time.Duration(i) * time.Millisecond),
			SessionID:     "s",
			Position:      uint64(i + 1),
			Data:          json.RawMessage(fmt.Sprintf(`{"n":%d, "html":"<&>"}`, i)),
		}
	}
	events.Chain(evs[:2], 0, "", nil)
	prev := events.Hash(evs[1])
	events.Chain(evs[2:], 2, prev, nil)
	return evs
}

func TestHashCoversEveryFieldButPosition(t *testing.T) {
	base := chained(t, "s-1", 2)[1]
	h := events.Hash(base)
	if len(h) != 64 {
		t.Fatalf("Hash = %q, want 64 hex digits", h)
	}
	same := map[string]func(*events.Event){
		"position":            func(e *events.Event) { e.Position = 99 },
		"time zone":           func(e *events.Event) { e.Time = e.Time.In(time.FixedZone("X", 3600)) },
		"data white space":    func(e *events.Event) { e.Data = json.RawMessage(" " + string(e.Data) + "\n") },
		"time monotonic bits": func(e *events.Event) { e.Time = e.Time.Round(0) },
	}
	for name, change := range same {
		t.Run("same/"+name, func(t *testing.T) {
			ev := base
			change(&ev)
			if got := events.Hash(ev); got != h {
				t.Errorf("Hash changed from %s to %s", h, got)
			}
		})
	}
	differ := map[string]func(*events.Event){
		"id":             func(e *events.Event) { e.ID[15]++ },
		"stream":         func(e *events.Event) { e.Stream = "s-2" },
		"version":        func(e *events.Event) { e.Version++ },
		"type":           func(e *events.Event) { e.Type = events.TypeToolReturned },
		"schema version": func(e *events.Event) { e.SchemaVersion++ },
		"time":           func(e *events.Event) { e.Time = e.Time.Add(time.Nanosecond) },
		"session":        func(e *events.Event) { e.SessionID = "t" },
		"run":            func(e *events.Event) { e.RunID = "r" },
		"tool call":      func(e *events.Event) { e.ToolCallID = "c" },
		"correlation":    func(e *events.Event) { e.CorrelationID = "c" },
		"causation":      func(e *events.Event) { e.CausationID = "c" },
		"prev hash":      func(e *events.Event) { e.PrevHash = "00" },
		"data":           func(e *events.Event) { e.Data = json.RawMessage(`{"n":2,"html":"<&>"}`) },
		"data escaping":  func(e *events.Event) { e.Data = json.RawMessage(`{"n":1,"html":"\u003c&>"}`) },
		// Moving bytes between adjacent fields must change the hash.
		"field boundary": func(e *events.Event) { e.SessionID, e.RunID = "", e.SessionID },
	}
	for name, change := range differ {
		t.Run("differs/"+name, func(t *testing.T) {
			ev := base
			change(&ev)
			if got := events.Hash(ev); got == h {
				t.Errorf("Hash did not change: %s", h)
			}
		})
	}
}

func TestChainNumbersAndLinks(t *testing.T) {
	evs := chained(t, "s-1", 4)
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			t.Errorf("event %d: version %d", i, ev.Version)
		}
	}
	if evs[0].PrevHash != "" || evs[2].PrevHash != events.Hash(evs[1]) {
		t.Errorf("PrevHash of versions 1 and 3 = %q, %q", evs[0].PrevHash, evs[2].PrevHash)
	}
	if err := events.VerifyChain(evs); err != nil {
		t.Errorf("VerifyChain of an intact chain: %v", err)
	}
}

// TestVerifyChainTampered tampers with a stream after a JSONL round trip
// (the recorded form) and checks the first broken event is reported.
func TestVerifyChainTampered(t *testing.T) {
	var buf bytes.Buffer
	if err := events.WriteJSONL(&buf, chained(t, "s-1", 5)); err != nil {
		t.Fatal(err)
	}
	recorded, err := events.ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := events.VerifyChain(recorded); err != nil {
		t.Fatalf("VerifyChain of the recorded history: %v", err)
	}
	tests := []struct {
		name   string
		tamper func([]events.Event) []events.Event
		want   events.ChainError // Index, Version, ID and Fault are compared
	}{
		{"altered data", func(evs []events.Event) []events.Event {
			evs[2].Data = json.RawMessage(`{"n":2,"html":"changed"}`)
			return evs
		}, events.ChainError{Index: 3, Version: 4, Fault: events.FaultPrevHash}},
		{"altered last event", func(evs []events.Event) []events.Event {
			evs[4].PrevHash = events.Hash(evs[2])
			return evs
		}, events.ChainError{Index: 4, Version: 5, Fault: events.FaultPrevHash}},
		{"deleted event", func(evs []events.Event) []events.Event {
			return append(evs[:1:1], evs[2:]...)
		}, events.ChainError{Index: 1, Version: 3, Fault: events.FaultVersionGap}},
		{"deleted and renumbered", func(evs []events.Event) []events.Event {
			evs = append(evs[:1:1], evs[2:]...)
			for i := range evs {
				evs[i].Version = uint64(i + 1)
			}
			return evs
		}, events.ChainError{Index: 1, Version: 2, Fault: events.FaultPrevHash}},
		{"swapped events", func(evs []events.Event) []events.Event {
			evs[1], evs[2] = evs[2], evs[1]
			return evs
		}, events.ChainError{Index: 1, Version: 3, Fault: events.FaultVersionGap}},
		{"swapped and renumbered", func(evs []events.Event) []events.Event {
			evs[1], evs[2] = evs[2], evs[1]
			evs[1].Version, evs[2].Version = 2, 3
			return evs
		}, events.ChainError{Index: 1, Version: 2, Fault: events.FaultPrevHash}},
		{"other stream", func(evs []events.Event) []events.Event {
			evs[3].Stream = "s-2"
			return evs
		}, events.ChainError{Index: 3, Version: 4, Fault: events.FaultWrongStream}},
		{"missing first", func(evs []events.Event) []events.Event {
			return evs[1:]
		}, events.ChainError{Index: 0, Version: 2, Fault: events.FaultVersionGap}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := tc.tamper(append([]events.Event(nil), recorded...))
			got := events.VerifyChain(evs)
			if got == nil {
				t.Fatal("VerifyChain accepted a tampered history")
			}
			if !errors.Is(got, events.ErrBrokenChain) {
				t.Errorf("error %v does not match ErrBrokenChain", got)
			}
			want := tc.want
			want.ID = evs[want.Index].ID.String()
			g := events.ChainError{Index: got.Index, Version: got.Version, ID: got.ID, Fault: got.Fault}
			if diff := cmp.Diff(want, g); diff != "" {
				t.Errorf("first broken event (-want +got):\n%s\nerror: %v", diff, got)
			}
		})
	}
}

func TestVerifyStreams(t *testing.T) {
	a, b := chained(t, "a", 3), chained(t, "b", 3)
	log := []events.Event{a[0], b[0], a[1], b[1], b[2], a[2]}
	seq := func(evs []events.Event) func(func(events.Event, error) bool) {
		return func(yield func(events.Event, error) bool) {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
	calls := 0
	res, err := events.VerifyStreams(seq(log), events.VerifyOptions{Progress: func(int) { calls++ }})
	if err != nil || res.Events != 6 || res.Streams != 2 || calls != 6 {
		t.Errorf("VerifyStreams = %+v, %v with %d progress calls; want 6 events in 2 streams, nil, 6", res, err, calls)
	}
	log[4].Data = json.RawMessage(`{}`) // b's version 3 is b's last: alter a's instead
	log[2].Data = json.RawMessage(`{}`)
	res, err = events.VerifyStreams(seq(log), events.VerifyOptions{})
	var ce *events.ChainError
	if !errors.As(err, &ce) || ce.Stream != "a" || ce.Version != 3 || res.Events != 5 {
		t.Errorf("VerifyStreams of a tampered log = %+v, %v; want a break at a's version 3 after 5 events", res, err)
	}
}
