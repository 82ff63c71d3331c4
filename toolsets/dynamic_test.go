package toolsets_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

type pathArgs struct {
	Path string `json:"path"`
}

// namedTool builds a plain tool that returns "name:path".
func namedTool(t testing.TB, name string) toolsets.Tool {
	t.Helper()
	tool, err := toolsets.NewFunc(name, func(_ context.Context, a pathArgs) (string, error) {
		return name + ":" + a.Path, nil
	}, toolsets.WithDescription("Tool "+name+"."))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func staticSet(t testing.TB, name string, tools ...string) *toolsets.Static {
	t.Helper()
	var ts []toolsets.Tool
	for _, n := range tools {
		ts = append(ts, namedTool(t, n))
	}
	s, err := toolsets.New(name, ts, toolsets.WithInstructions("Use "+name+"."))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func toolNames(p toolsets.Preparation) []string {
	var out []string
	for _, t := range p.Tools {
		out = append(out, t.Definition().Name)
	}
	return out
}

// nestingToolset returns a preparation that holds other toolsets.
type nestingToolset struct {
	name string
	own  []toolsets.Tool
	subs []toolsets.Toolset
	self bool // nest itself, forever
}

func (n *nestingToolset) Info() toolsets.ToolsetInfo {
	return toolsets.ToolsetInfo{Name: n.name, ID: n.name}
}

func (n *nestingToolset) Prepare(context.Context, *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p := toolsets.Preparation{Tools: n.own, Toolsets: n.subs}
	if n.self {
		p.Toolsets = []toolsets.Toolset{n}
	}
	return p, nil
}

func TestResolve(t *testing.T) {
	two := 2
	withDefaults, err := toolsets.New("limited", []toolsets.Tool{namedTool(t, "slow")}, toolsets.WithTimeout(time.Second), toolsets.WithMaxRetries(two))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		ts        toolsets.Toolset
		wantTools []string
		wantGroup []string
		is        error
	}{
		{"plain static", staticSet(t, "a", "x", "y"), []string{"x", "y"}, []string{"a"}, nil},
		{"prepare returns other toolsets", &nestingToolset{name: "outer", own: []toolsets.Tool{namedTool(t, "own")}, subs: []toolsets.Toolset{staticSet(t, "a", "x"), staticSet(t, "b", "y")}},
			[]string{"own", "x", "y"}, []string{"a", "b"}, nil},
		{"nested twice", &nestingToolset{name: "outer", subs: []toolsets.Toolset{&nestingToolset{name: "mid", subs: []toolsets.Toolset{staticSet(t, "a", "x")}}}},
			[]string{"x"}, []string{"a"}, nil},
		{"duplicate across nested toolsets", &nestingToolset{name: "outer", subs: []toolsets.Toolset{staticSet(t, "a", "x"), staticSet(t, "b", "x")}}, nil, nil, toolsets.ErrDuplicateTool},
		{"self nesting", &nestingToolset{name: "loop", self: true}, nil, nil, toolsets.ErrNesting},
		{"nested defaults kept", &nestingToolset{name: "outer", subs: []toolsets.Toolset{withDefaults}}, []string{"slow"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := toolsets.Resolve(t.Context(), tt.ts, &toolsets.ToolsetContext{RunID: "r1"})
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.wantTools, toolNames(p)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			var groups []string
			for _, in := range p.Instructions {
				groups = append(groups, in.Group)
			}
			if diff := cmp.Diff(tt.wantGroup, groups); diff != "" {
				t.Errorf("instruction groups (-want +got):\n%s", diff)
			}
			if p.Toolsets != nil {
				t.Errorf("resolved preparation still has toolsets")
			}
		})
	}
	t.Run("nested defaults values", func(t *testing.T) {
		p, err := toolsets.Resolve(t.Context(), &nestingToolset{name: "outer", subs: []toolsets.Toolset{withDefaults}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Tools[0].Definition()
		if d.Timeout != time.Second || d.MaxRetries == nil || *d.MaxRetries != 2 {
			t.Errorf("definition timeout %s retries %v, want the nested toolset's 1s and 2", d.Timeout, d.MaxRetries)
		}
	})
	t.Run("duplicate error names the tool", func(t *testing.T) {
		_, err := toolsets.Resolve(t.Context(), &nestingToolset{name: "outer", subs: []toolsets.Toolset{staticSet(t, "a", "lookup"), staticSet(t, "b", "lookup")}}, nil)
		var de *toolsets.DefinitionError
		if !errors.As(err, &de) || de.Tool != "lookup" || de.Toolset != "b" {
			t.Errorf("err = %v, want a DefinitionError naming lookup in b", err)
		}
	})
}

func TestDynamic(t *testing.T) {
	lookup, other := namedTool(t, "lookup"), namedTool(t, "other")
	var entered, exited []string
	d, err := toolsets.NewDynamic("workspace", toolsets.DynamicFuncs{
		Tools: func(_ context.Context, tc *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
			if tc.Metadata["role"] == "admin" {
				return []toolsets.Tool{lookup, other}, nil
			}
			return []toolsets.Tool{lookup}, nil
		},
		Instructions: func(_ context.Context, tc *toolsets.ToolsetContext) ([]string, error) {
			return []string{fmt.Sprintf("Preserve run id %s in audit notes.", tc.RunID)}, nil
		},
		Enter: func(_ context.Context, tc *toolsets.ToolsetContext) error {
			entered = append(entered, tc.RunID)
			return nil
		},
		Exit: func(_ context.Context, tc *toolsets.ToolsetContext) error {
			exited = append(exited, tc.RunID)
			return nil
		},
	}, toolsets.WithID("workspace-v1"), toolsets.WithInstructions("Fixed line."))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tc    *toolsets.ToolsetContext
		tools []string
		ins   []toolsets.Instruction
	}{
		{"user", &toolsets.ToolsetContext{RunID: "r1", Metadata: map[string]any{"role": "user"}}, []string{"lookup"},
			[]toolsets.Instruction{{Group: "workspace", Text: "Fixed line."}, {Group: "workspace", Text: "Preserve run id r1 in audit notes."}}},
		{"admin", &toolsets.ToolsetContext{RunID: "r2", Metadata: map[string]any{"role": "admin"}}, []string{"lookup", "other"},
			[]toolsets.Instruction{{Group: "workspace", Text: "Fixed line."}, {Group: "workspace", Text: "Preserve run id r2 in audit notes."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := d.Prepare(t.Context(), tt.tc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.tools, toolNames(p)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.ins, p.Instructions); diff != "" {
				t.Errorf("instructions (-want +got):\n%s", diff)
			}
		})
	}
	if err := d.Enter(t.Context(), &toolsets.ToolsetContext{RunID: "r9"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Exit(t.Context(), &toolsets.ToolsetContext{RunID: "r9"}); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(entered, []string{"r9"}) || !cmp.Equal(exited, []string{"r9"}) {
		t.Errorf("entered %v exited %v", entered, exited)
	}
	if d.Info().ID != "workspace-v1" {
		t.Errorf("id = %q", d.Info().ID)
	}
}

func TestNewDynamicRejects(t *testing.T) {
	tools := func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) { return nil, nil }
	tests := []struct {
		name string
		ts   string
		f    toolsets.DynamicFuncs
		opts []toolsets.Option
		is   error
	}{
		{"invalid name", "bad name", toolsets.DynamicFuncs{Tools: tools}, nil, toolsets.ErrInvalidName},
		{"no tools function", "ok", toolsets.DynamicFuncs{}, nil, toolsets.ErrInvalidDefinition},
		{"option that does not apply", "ok", toolsets.DynamicFuncs{Tools: tools}, []toolsets.Option{toolsets.WithStrict(true)}, toolsets.ErrInvalidDefinition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := toolsets.NewDynamic(tt.ts, tt.f, tt.opts...); !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

func TestResourceMap(t *testing.T) {
	var r toolsets.Resources = toolsets.ResourceMap{"db": "conn"}
	if v, ok := r.Resource("db"); !ok || v != "conn" {
		t.Errorf("Resource(db) = %v, %v", v, ok)
	}
	if _, ok := r.Resource("missing"); ok {
		t.Errorf("Resource(missing) found")
	}
}
