package events_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// Arguments that are not JSON are kept, byte for byte, as raw_arguments:
// the event still builds and decodes strictly, and Args gives them back.
func TestToolRequestedArguments(t *testing.T) {
	tests := []struct {
		name string
		args string
		want events.ToolRequested
		data string
	}{
		{"object", `{"x":1}`, events.ToolRequested{Tool: "q", Arguments: json.RawMessage(`{"x":1}`)}, `{"tool":"q","arguments":{"x":1}}`},
		{"none", ``, events.ToolRequested{Tool: "q"}, `{"tool":"q"}`},
		{"blank", " \n", events.ToolRequested{Tool: "q"}, `{"tool":"q"}`},
		{"not JSON", `{"x":`, events.ToolRequested{Tool: "q", RawArguments: `{"x":`}, `{"tool":"q","raw_arguments":"{\"x\":"}`},
		{"not JSON at all", `x=1, y=2`, events.ToolRequested{Tool: "q", RawArguments: `x=1, y=2`}, `{"tool":"q","raw_arguments":"x=1, y=2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := events.NewToolRequested("q", "", json.RawMessage(tt.args))
			if diff := cmp.Diff(tt.want, d); diff != "" {
				t.Errorf("NewToolRequested (-want +got):\n%s", diff)
			}
			ev, err := events.New(events.TypeToolRequested, d)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if string(ev.Data) != tt.data {
				t.Errorf("data = %s, want %s", ev.Data, tt.data)
			}
			back, err := events.DecodeAs[events.ToolRequested](ev)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			want := tt.args
			if strings.TrimSpace(want) == "" {
				want = "" // blank arguments are none
			}
			if string(back.Args()) != want {
				t.Errorf("Args() = %q, want %q", back.Args(), want)
			}
		})
	}
}
