package console

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// TestTimelineShowsUndecodableData: an event whose data does not decode
// into its type is an error row that says so, never a blank row that reads
// like a real event with empty fields.
func TestTimelineShowsUndecodableData(t *testing.T) {
	good, _ := json.Marshal(events.RunStarted{Agent: "scout"})
	evs := []events.Event{
		{Version: 1, Type: events.TypeRunStarted, RunID: "r1", Data: good},
		{Version: 2, Type: events.TypeRunFailed, RunID: "r1", Data: json.RawMessage(`{"error":"not an object"}`)},
	}
	rows := timeline(evs)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	if rows[0].Error || rows[0].Title != "run started: scout" {
		t.Errorf("row 1 = %q (error %v), want the decoded run.started", rows[0].Title, rows[0].Error)
	}
	bad := rows[1]
	if !bad.Error || !strings.Contains(bad.Title, "data does not decode") || bad.Text == "" {
		t.Errorf("row 2 = %q / %q (error %v): want an error row naming the decode failure", bad.Title, bad.Text, bad.Error)
	}
}
