package toolsets_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

func TestClosest(t *testing.T) {
	names := []string{"search", "send_email", "find_empty_slot", "move_meeting"}
	cases := []struct {
		name string
		want []string
	}{
		{"serch", []string{"search"}},
		{"move_meting", []string{"move_meeting"}},
		{"empty_slot", []string{"find_empty_slot"}},
		{"launch_rockets", nil},
	}
	for _, c := range cases {
		if got := toolsets.Closest(c.name, names, 3); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNotFoundNamesTheClosestTools(t *testing.T) {
	search, err := toolsets.NewFunc("search", func(context.Context, struct{}) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(search); err != nil {
		t.Fatal(err)
	}
	ret := reg.Call(t.Context(), toolsets.Invocation{Name: "serch"})
	if ret.Kind != toolsets.KindNotFound || !strings.Contains(string(ret.Content), `NameError: there is no tool named \"serch\". Did you mean \"search\"?`) {
		t.Fatalf("ret = %s %s", ret.Kind, ret.Content)
	}
}
