package projections_test

import (
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// eventSeq yields evs as a log read does.
func eventSeq(evs []events.Event) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// TestGoldenTampered alters, deletes and swaps events of each golden
// history and checks the chain check names the first broken event.
func TestGoldenTampered(t *testing.T) {
	type broken struct {
		Version uint64
		ID      string
		Fault   events.ChainFault
	}
	for _, h := range histories {
		recorded := loadHistory(t, h)
		if len(recorded) < 6 {
			t.Fatalf("%s: %d events, too short to tamper with", h.name, len(recorded))
		}
		tests := []struct {
			name   string
			tamper func([]events.Event) []events.Event
			want   func(orig []events.Event) broken
		}{
			{"altered data", func(evs []events.Event) []events.Event {
				evs[3].Data = json.RawMessage(`{"altered":true}`)
				return evs
			}, func(o []events.Event) broken { return broken{o[4].Version, o[4].ID.String(), events.FaultPrevHash} }},
			{"deleted event", func(evs []events.Event) []events.Event {
				return append(evs[:3:3], evs[4:]...)
			}, func(o []events.Event) broken { return broken{o[4].Version, o[4].ID.String(), events.FaultVersionGap} }},
			{"swapped events", func(evs []events.Event) []events.Event {
				evs[3], evs[4] = evs[4], evs[3]
				return evs
			}, func(o []events.Event) broken { return broken{o[4].Version, o[4].ID.String(), events.FaultVersionGap} }},
			{"swapped and renumbered", func(evs []events.Event) []events.Event {
				evs[3], evs[4] = evs[4], evs[3]
				evs[3].Version, evs[4].Version = evs[4].Version, evs[3].Version
				return evs
			}, func(o []events.Event) broken { return broken{o[3].Version, o[4].ID.String(), events.FaultPrevHash} }},
		}
		for _, tc := range tests {
			t.Run(h.name+"/"+tc.name, func(t *testing.T) {
				orig := append([]events.Event(nil), recorded...)
				_, err := events.VerifyStreams(eventSeq(tc.tamper(append([]events.Event(nil), recorded...))), events.VerifyOptions{})
				var ce *events.ChainError
				if !errors.As(err, &ce) {
					t.Fatalf("VerifyStreams = %v, want a *ChainError", err)
				}
				if diff := cmp.Diff(tc.want(orig), broken{ce.Version, ce.ID, ce.Fault}); diff != "" {
					t.Errorf("first broken event (-want +got):\n%s\nerror: %v", diff, err)
				}
			})
		}
	}
}
