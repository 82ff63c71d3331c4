package replay_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/replay"
)

// golden reads a recorded history of the projections package.
func golden(t *testing.T, name string) []events.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "projections", "testdata", name+".events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := events.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

var histories = []string{"parallel", "approved", "denied", "refused"}

func TestGoldenHistoriesReplayEqual(t *testing.T) {
	for _, name := range histories {
		t.Run(name, func(t *testing.T) {
			if err := replay.Check(t.Context(), golden(t, name)); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// TestAlteredResponseDiverges alters the text of the last recorded model
// response: the replay answers with it, so the run's output differs from
// the recorded run.completed; the first divergence is the response itself.
func TestAlteredResponseDiverges(t *testing.T) {
	for _, name := range histories {
		t.Run(name, func(t *testing.T) {
			evs := golden(t, name)
			last := -1
			for i, ev := range evs {
				if ev.Type == events.TypeModelResponse {
					last = i
				}
			}
			if last < 0 {
				t.Fatal("no model.response")
			}
			var d map[string]any
			if err := json.Unmarshal(evs[last].Data, &d); err != nil {
				t.Fatal(err)
			}
			altered := strings.Replace(string(evs[last].Data), `"kind":"text","text":"`, `"kind":"text","text":"ALTERED `, 1)
			if altered == string(evs[last].Data) {
				t.Fatalf("the last response has no text part: %s", evs[last].Data)
			}
			evs[last].Data = json.RawMessage(altered)

			err := replay.Check(t.Context(), evs)
			var div *replay.Divergence
			if !errors.As(err, &div) || !errors.Is(err, replay.ErrDiverged) {
				t.Fatalf("Check = %v, want a *Divergence", err)
			}
			// The replay answered with the altered text, so the recorded
			// (altered) response matches and the run's outcome does not.
			if div.Version <= evs[last].Version || div.ExpectedType == events.TypeModelResponse {
				t.Errorf("divergence %v, want one after the altered response at version %d", div, evs[last].Version)
			}
			if !strings.Contains(div.Got, "ALTERED") {
				t.Errorf("divergence %v does not show the altered text on the replayed side", div)
			}
		})
	}
}
