package toolsets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

type slotArgs struct {
	After           string `json:"after" jsonschema:"Earliest acceptable start time."`
	DurationMinutes int    `json:"duration_minutes,omitempty" jsonschema:"Required meeting length."`
}

func docDefs(t *testing.T, documented bool) []toolsets.Definition {
	t.Helper()
	find, err := toolsets.NewFunc("find_empty_slot", func(context.Context, slotArgs) (string, error) { return "", nil },
		toolsets.WithDescription("Find an available calendar slot after a given time. Searches the calendar."))
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := toolsets.NewFunc("load_adapter", func(context.Context, struct{}) (string, error) { return "", nil },
		toolsets.WithDescription("Internal."), toolsets.WithVisibility(toolsets.Hidden))
	if err != nil {
		t.Fatal(err)
	}
	defs := []toolsets.Definition{find.Definition(), hidden.Definition()}
	if !documented {
		bare, err := toolsets.NewFunc("ping", func(context.Context, struct {
			Host string `json:"host"`
		}) (string, error) {
			return "", nil
		}, toolsets.WithDescription("Ping a host."))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, bare.Definition())
	}
	return defs
}

func TestExpandPlaceholders(t *testing.T) {
	defs := docDefs(t, true)
	cases := []struct{ in, want string }{
		{"Tools:\n{brief_tools}", "Tools:\n- find_empty_slot: Find an available calendar slot after a given time."},
		{"{tools}", "- find_empty_slot(after, duration_minutes): Find an available calendar slot after a given time. Searches the calendar."},
		{"{detailed_tools}", "func find_empty_slot(after string, duration_minutes int /* optional */)\n    // Find an available calendar slot after a given time. Searches the calendar.\n    //   after: Earliest acceptable start time.\n    //   duration_minutes: Required meeting length."},
		{"Variables: {shared_var_names}", "Variables: calendar, slot"},
		{"no placeholders {here}", "no placeholders {here}"},
	}
	for _, c := range cases {
		got, err := toolsets.ExpandPlaceholders(c.in, defs, []string{"calendar", "slot"})
		if err != nil || got != c.want {
			t.Errorf("%q:\n got %q, %v\nwant %q", c.in, got, err, c.want)
		}
		if strings.Contains(got, "load_adapter") {
			t.Errorf("%q shows the hidden tool", c.in)
		}
	}
	if got, _ := toolsets.ExpandPlaceholders("{shared_var_names}", defs, nil); got != "(none yet)" {
		t.Errorf("no variables: %q", got)
	}
}

func TestUndocumented(t *testing.T) {
	defs := docDefs(t, false)
	if _, err := toolsets.ExpandPlaceholders("{brief_tools}", defs, nil); err != nil {
		t.Fatalf("brief listing needs no parameter docs: %v", err)
	}
	_, err := toolsets.ExpandPlaceholders("{detailed_tools}", defs, nil)
	var ue *toolsets.UndocumentedError
	if !errors.As(err, &ue) || ue.Tool != "ping" || len(ue.Params) != 1 || ue.Params[0] != "host" || !errors.Is(err, toolsets.ErrUndocumented) {
		t.Fatalf("err = %v; want ping's host reported", err)
	}
}
