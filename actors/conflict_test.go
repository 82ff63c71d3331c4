package actors

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
)

func TestToolConflicts(t *testing.T) {
	tests := []struct {
		name  string
		loose []string
		sets  []offered
		want  map[int]*ToolConflictError
	}{
		{name: "distinct", loose: []string{"a"}, sets: []offered{{"one", []string{"b"}}, {"two", []string{"c"}}}},
		{name: "two toolsets", sets: []offered{{"one", []string{"x", "y"}}, {"two", []string{"z", "y"}}},
			want: map[int]*ToolConflictError{1: {Tool: "y", First: "one", Second: "two"}}},
		{name: "a loose tool and a toolset", loose: []string{"y"}, sets: []offered{{"one", []string{"y"}}},
			want: map[int]*ToolConflictError{0: {Tool: "y", First: "", Second: "one"}}},
		{name: "the first conflict of each later toolset", sets: []offered{{"one", []string{"x", "y"}}, {"two", []string{"y", "x"}}, {"three", []string{"x"}}},
			want: map[int]*ToolConflictError{1: {Tool: "y", First: "one", Second: "two"}, 2: {Tool: "x", First: "one", Second: "three"}}},
		{name: "a failed toolset's names stay free", sets: []offered{{"one", []string{"x"}}, {"two", []string{"x", "w"}}, {"three", []string{"w"}}},
			want: map[int]*ToolConflictError{1: {Tool: "x", First: "one", Second: "two"}}},
		{name: "empty toolsets", sets: []offered{{"one", nil}, {"two", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, toolConflicts(tt.loose, tt.sets)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	err := error(&ToolConflictError{Tool: "y", First: "one", Second: "two"})
	if !errors.Is(err, toolsets.ErrDuplicateTool) {
		t.Errorf("%v does not match ErrDuplicateTool", err)
	}
}
