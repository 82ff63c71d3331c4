package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// infoOnly is a toolset with a given identity whose Prepare must not run.
type infoOnly struct {
	name, id string
	prepared *int
}

func (i infoOnly) Info() toolsets.ToolsetInfo { return toolsets.ToolsetInfo{Name: i.name, ID: i.id} }
func (i infoOnly) Prepare(context.Context, *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	*i.prepared++
	return toolsets.Preparation{}, nil
}

func TestValidateIDs(t *testing.T) {
	var prepared int
	ts := func(name, id string) toolsets.Toolset { return infoOnly{name, id, &prepared} }
	tests := []struct {
		name     string
		strict   bool
		toolsets []toolsets.Toolset
		errs     []toolsets.IDProblem
		warnings []toolsets.IDProblem
	}{
		{"clean", true, []toolsets.Toolset{ts("a", "a-v1"), ts("b", "b-v1")}, nil, nil},
		{"missing id, strict", true, []toolsets.Toolset{ts("a", "")}, []toolsets.IDProblem{toolsets.ProblemMissingID}, nil},
		{"missing id, lax", false, []toolsets.Toolset{ts("a", "")}, nil, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"blank id", false, []toolsets.Toolset{ts("a", "  ")}, []toolsets.IDProblem{toolsets.ProblemEmptyID}, nil},
		{"duplicate id", false, []toolsets.Toolset{ts("a", "x"), ts("b", "x")}, []toolsets.IDProblem{toolsets.ProblemDuplicateID}, nil},
		{"duplicate name", true, []toolsets.Toolset{ts("a", "x"), ts("a", "y")}, nil, []toolsets.IDProblem{toolsets.ProblemDuplicateName}},
		{"nil toolset", true, []toolsets.Toolset{nil}, []toolsets.IDProblem{toolsets.ProblemMissingID}, nil},
	}
	problems := func(is []toolsets.IDIssue) []toolsets.IDProblem {
		var out []toolsets.IDProblem
		for _, i := range is {
			out = append(out, i.Problem)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := toolsets.ValidateIDs(tt.strict, tt.toolsets...)
			if diff := cmp.Diff(tt.errs, problems(r.Errors)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, problems(r.Warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if err := r.Err(); (err != nil) != (len(tt.errs) > 0) || (err != nil && !errors.Is(err, toolsets.ErrToolsetID)) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
	// Factories and dynamic toolsets are checked without being prepared.
	f, _ := toolsets.NewFactory("f", func(context.Context, *toolsets.ToolsetContext) (any, error) { prepared++; return nil, nil })
	if err := toolsets.ValidateForDurability(f, ts("d", "d")).Err(); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 {
		t.Errorf("validation prepared %d toolsets", prepared)
	}
}

// bigLibrary builds a library of n tools in toolsets of 50.
func bigLibrary(t testing.TB, n int) *toolsets.Library {
	t.Helper()
	var sets []toolsets.Toolset
	for s := 0; s*50 < n; s++ {
		var tools []toolsets.Tool
		for i := s * 50; i < min(n, (s+1)*50); i++ {
			name := "tool_" + itoa(i)
			tl, err := toolsets.NewFunc(name, func(_ context.Context, a pathArgs) (string, error) { return name + ":" + a.Path, nil },
				toolsets.WithDescription("Operation number "+itoa(i)+" on files."))
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tl)
		}
		ts, err := toolsets.New("set_"+itoa(s), tools, toolsets.WithID("set-"+itoa(s)))
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, ts)
	}
	lib, err := toolsets.NewLibrary(context.Background(), sets...)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestLibrary(t *testing.T) {
	ws := staticSet(t, "workspace", "read_file", "write_file")
	tickets, err := toolsets.New("tickets", []toolsets.Tool{namedTool(t, "fetch_ticket")}, toolsets.WithID("tickets-v2"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := toolsets.NewLibrary(t.Context(), ws, tickets)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range lib.Definitions() {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"read_file", "write_file", "fetch_ticket"}, names); diff != "" {
		t.Errorf("definitions (-want +got):\n%s", diff)
	}
	if _, ns, ok := lib.Lookup("fetch_ticket"); !ok || ns != "tickets-v2" {
		t.Errorf("Lookup = %q, %v", ns, ok)
	}
	// workspace was built without WithID: its name stands in for running,
	// but the durable (strict) check reports it.
	r := lib.ValidateIDs()
	if len(r.Errors) != 1 || r.Errors[0].Name != "workspace" || r.Errors[0].Problem != toolsets.ProblemMissingID {
		t.Errorf("ValidateIDs = %+v, want one missing_id for workspace", r)
	}
	b, err := json.Marshal(lib)
	if err != nil {
		t.Fatal(err)
	}
	var desc toolsets.LibraryDescription
	if err := json.Unmarshal(b, &desc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lib.Describe(), desc); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	t.Run("duplicate tool across toolsets", func(t *testing.T) {
		_, err := toolsets.NewLibrary(t.Context(), staticSet(t, "a", "x"), staticSet(t, "b", "x"))
		if !errors.Is(err, toolsets.ErrDuplicateTool) || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("err = %v, want a duplicate naming x", err)
		}
	})
	t.Run("duplicate ids", func(t *testing.T) {
		a, err := toolsets.New("a", []toolsets.Tool{namedTool(t, "x")}, toolsets.WithID("a-v1"))
		if err != nil {
			t.Fatal(err)
		}
		a2, err := toolsets.New("a", []toolsets.Tool{namedTool(t, "y")}, toolsets.WithID("a-v1"))
		if err != nil {
			t.Fatal(err)
		}
		lib, err := toolsets.NewLibrary(t.Context(), a, a2)
		if err != nil {
			t.Fatal(err)
		}
		r := lib.ValidateIDs()
		if len(r.Errors) != 1 || r.Errors[0].Problem != toolsets.ProblemDuplicateID || len(r.Warnings) != 1 {
			t.Errorf("report = %+v", r)
		}
	})
	t.Run("nil toolset", func(t *testing.T) {
		if _, err := toolsets.NewLibrary(t.Context(), nil); !errors.Is(err, toolsets.ErrInvalidDefinition) {
			t.Errorf("err = %v", err)
		}
	})
}
