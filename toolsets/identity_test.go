package toolsets_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// TestImplicitIDs: a toolset built without an explicit id runs under its
// name, and the identity checks report it as missing_id; wrappers that
// change what the model sees derive their own identity, filters keep the
// wrapped one.
func TestImplicitIDs(t *testing.T) {
	explicit := func(t *testing.T) toolsets.Toolset {
		ts, err := toolsets.New("workspace", []toolsets.Tool{namedTool(t, "read_file")}, toolsets.WithID("workspace"))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	implicit := func(t *testing.T) toolsets.Toolset { return staticSet(t, "workspace", "read_file") }
	must := func(t *testing.T, ts toolsets.Toolset, err error) toolsets.Toolset {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	tools := func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) { return nil, nil }
	lib := func(t *testing.T) *toolsets.Library {
		l, err := toolsets.NewLibrary(t.Context(), explicit(t))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	tests := []struct {
		name   string
		build  func(t *testing.T) []toolsets.Toolset
		ids    []string // the ids the toolsets run under
		errors []toolsets.IDProblem
	}{
		{"explicit id", func(t *testing.T) []toolsets.Toolset { return []toolsets.Toolset{explicit(t)} }, []string{"workspace"}, nil},
		{"static without id", func(t *testing.T) []toolsets.Toolset { return []toolsets.Toolset{implicit(t)} },
			[]string{"workspace"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"function toolset without id", func(t *testing.T) []toolsets.Toolset {
			fs, err := toolsets.NewFunction("functions")
			return []toolsets.Toolset{must(t, fs, err)}
		}, []string{"functions"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"dynamic without id", func(t *testing.T) []toolsets.Toolset {
			d, err := toolsets.NewDynamic("dyn", toolsets.DynamicFuncs{Tools: tools})
			return []toolsets.Toolset{must(t, d, err)}
		}, []string{"dyn"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"factory (its id is required)", func(t *testing.T) []toolsets.Toolset {
			f, err := toolsets.NewFactory("tenant-tools", func(context.Context, *toolsets.ToolsetContext) (any, error) { return nil, nil })
			return []toolsets.Toolset{must(t, f, err)}
		}, []string{"tenant-tools"}, nil},
		{"search without id", func(t *testing.T) []toolsets.Toolset {
			s, err := toolsets.NewSearch(lib(t), 3)
			return []toolsets.Toolset{must(t, s, err)}
		}, []string{"tool_search"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"search with id", func(t *testing.T) []toolsets.Toolset {
			s, err := toolsets.NewSearch(lib(t), 3, toolsets.SearchID("search-v1"))
			return []toolsets.Toolset{must(t, s, err)}
		}, []string{"search-v1"}, nil},
		{"proxy without id", func(t *testing.T) []toolsets.Toolset {
			p, err := toolsets.NewProxy(lib(t), "", 3)
			return []toolsets.Toolset{must(t, p, err)}
		}, []string{"tool_proxy"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"one toolset under two prefixes", func(t *testing.T) []toolsets.Toolset {
			ws := explicit(t)
			a, err := toolsets.Prefixed(ws, "ws")
			b, err2 := toolsets.Prefixed(ws, "ro")
			return []toolsets.Toolset{must(t, a, err), must(t, b, err2)}
		}, []string{"ws_workspace", "ro_workspace"}, nil},
		{"a prefix over an implicit id", func(t *testing.T) []toolsets.Toolset {
			a, err := toolsets.Prefixed(implicit(t), "ws")
			return []toolsets.Toolset{must(t, a, err)}
		}, []string{"ws_workspace"}, []toolsets.IDProblem{toolsets.ProblemMissingID}},
		{"renamed and annotated derive ids", func(t *testing.T) []toolsets.Toolset {
			ws := explicit(t)
			r, err := toolsets.Renamed(ws, map[string]string{"read_file": "ws_read"})
			a, err2 := toolsets.Annotated(ws, map[string]any{"bundle": "fs", "audit": true})
			return []toolsets.Toolset{ws, must(t, r, err), must(t, a, err2)}
		}, []string{"workspace", "workspace+renamed(read_file=ws_read)", "workspace+annotated(audit,bundle)"}, nil},
		{"a filter keeps the wrapped id", func(t *testing.T) []toolsets.Toolset {
			ws := explicit(t)
			f, err := toolsets.Filtered(ws, toolsets.Filter{Include: []string{"read_file"}})
			g, err2 := toolsets.RequireApproval(ws, []string{"*"}, "")
			return []toolsets.Toolset{must(t, f, err), must(t, g, err2)}
		}, []string{"workspace", "workspace"}, []toolsets.IDProblem{toolsets.ProblemDuplicateID}},
		{"two toolsets, no ids, one name", func(t *testing.T) []toolsets.Toolset {
			return []toolsets.Toolset{implicit(t), implicit(t)}
		}, []string{"workspace", "workspace"}, []toolsets.IDProblem{toolsets.ProblemMissingID, toolsets.ProblemMissingID, toolsets.ProblemDuplicateID}},
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
			tss := tt.build(t)
			var ids []string
			for _, ts := range tss {
				ids = append(ids, ts.Info().ID)
			}
			if diff := cmp.Diff(tt.ids, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			strict := toolsets.ValidateForDurability(tss...)
			if diff := cmp.Diff(tt.errors, problems(strict.Errors)); diff != "" {
				t.Errorf("strict errors (-want +got):\n%s", diff)
			}
			// Lenient: a missing id is a warning, the others stay errors.
			lax := toolsets.ValidateIDs(false, tss...)
			var laxErrs, laxMissing []toolsets.IDProblem
			for _, p := range tt.errors {
				if p == toolsets.ProblemMissingID {
					laxMissing = append(laxMissing, p)
				} else {
					laxErrs = append(laxErrs, p)
				}
			}
			if diff := cmp.Diff(laxErrs, problems(lax.Errors)); diff != "" {
				t.Errorf("lenient errors (-want +got):\n%s", diff)
			}
			var gotMissing []toolsets.IDProblem
			for _, p := range problems(lax.Warnings) {
				if p == toolsets.ProblemMissingID {
					gotMissing = append(gotMissing, p)
				}
			}
			if diff := cmp.Diff(laxMissing, gotMissing); diff != "" {
				t.Errorf("lenient missing_id warnings (-want +got):\n%s", diff)
			}
		})
	}
}
