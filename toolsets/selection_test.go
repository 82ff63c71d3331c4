package toolsets_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

func TestSelectionParse(t *testing.T) {
	cases := []struct {
		name    string
		entries []string
		problem string // "" for valid
	}{
		{"all", []string{"ALL"}, ""},
		{"all but one", []string{"ALL", "-send_email"}, ""},
		{"system and one", []string{"SYSTEM", "+find_empty_slot"}, ""},
		{"empty", nil, "malformed"},
		{"lower-case category", []string{"all"}, "malformed"},
		{"bare name", []string{"send_email"}, "malformed"},
		{"sign alone", []string{"+"}, "malformed"},
		{"bad name", []string{"+has space"}, "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := toolsets.ParseSelection(c.entries...)
			if c.problem == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var se *toolsets.SelectionError
			if !errors.As(err, &se) || se.Problem != c.problem || !errors.Is(err, toolsets.ErrSelection) {
				t.Fatalf("err = %v; want a %s SelectionError", err, c.problem)
			}
		})
	}
}

func TestSelectionApply(t *testing.T) {
	defs := []toolsets.Definition{
		{Name: "run_code", Visibility: toolsets.System},
		{Name: "docstr", Visibility: toolsets.System},
		{Name: "find_empty_slot"},
		{Name: "send_email"},
		{Name: "load_adapter", Visibility: toolsets.Hidden},
	}
	cases := []struct {
		name    string
		entries []string
		want    []string
		problem string
	}{
		{"all", []string{"ALL"}, []string{"docstr", "find_empty_slot", "run_code", "send_email"}, ""},
		{"all but one", []string{"ALL", "-send_email"}, []string{"docstr", "find_empty_slot", "run_code"}, ""},
		{"system", []string{"SYSTEM"}, []string{"docstr", "run_code"}, ""},
		{"application", []string{"APPLICATION"}, []string{"find_empty_slot", "send_email"}, ""},
		{"system plus one", []string{"SYSTEM", "+find_empty_slot"}, []string{"docstr", "find_empty_slot", "run_code"}, ""},
		{"removed then added", []string{"APPLICATION", "-send_email", "+send_email"}, []string{"find_empty_slot", "send_email"}, ""},
		{"unknown", []string{"ALL", "-sned_email"}, nil, "unknown"},
		{"hidden", []string{"SYSTEM", "+load_adapter"}, nil, "hidden"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sel, err := toolsets.ParseSelection(c.entries...)
			if err != nil {
				t.Fatal(err)
			}
			keep, err := sel.Apply(defs)
			if c.problem != "" {
				var se *toolsets.SelectionError
				if !errors.As(err, &se) || se.Problem != c.problem {
					t.Fatalf("err = %v; want a %s SelectionError", err, c.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range keep {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("kept %v, want %v", got, c.want)
			}
		})
	}
}
