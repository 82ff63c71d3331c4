package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// prepared prepares ts for a run and returns its tool names and
// instruction groups.
func prepared(t *testing.T, ts toolsets.Toolset) ([]string, []string, error) {
	t.Helper()
	p, err := toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{RunID: "r1"})
	if err != nil {
		return nil, nil, err
	}
	var groups []string
	for _, in := range p.Instructions {
		groups = append(groups, in.Group)
	}
	return toolNames(p), groups, nil
}

func TestWrapperNamingRules(t *testing.T) {
	workspace := func(t *testing.T) toolsets.Toolset {
		return staticSet(t, "workspace", "read_file", "write_file", "list_dir")
	}
	long := strings.Repeat("p", toolsets.MaxNameLen-len("_read_file")+1)
	tests := []struct {
		name       string
		build      func(t *testing.T) (toolsets.Toolset, error)
		wantTools  []string
		wantGroups []string
		buildErr   error
		prepErr    error
	}{
		{"prefixed", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Prefixed(workspace(t), "ws") },
			[]string{"ws_read_file", "ws_write_file", "ws_list_dir"}, []string{"ws_workspace"}, nil, nil},
		{"prefixed twice", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Wrap(workspace(t)).Prefixed("a").Prefixed("b").Toolset()
		}, []string{"b_a_read_file", "b_a_write_file", "b_a_list_dir"}, []string{"b_a_workspace"}, nil, nil},
		{"invalid prefix", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Prefixed(workspace(t), "work space") },
			nil, nil, toolsets.ErrInvalidName, nil},
		{"empty prefix", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Prefixed(workspace(t), "") },
			nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"prefix too long for a tool name", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Prefixed(workspace(t), long) },
			nil, nil, nil, toolsets.ErrInvalidName},
		{"filtered include", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Filtered(workspace(t), toolsets.Filter{Include: []string{"read_file"}})
		}, []string{"read_file"}, []string{"workspace"}, nil, nil},
		{"filtered exclude", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Filtered(workspace(t), toolsets.Filter{Exclude: []string{"write_file"}})
		}, []string{"read_file", "list_dir"}, []string{"workspace"}, nil, nil},
		{"filtered predicate", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Filtered(workspace(t), toolsets.Filter{Predicate: func(d toolsets.Definition) bool { return strings.Contains(d.Name, "read") }})
		}, []string{"read_file"}, []string{"workspace"}, nil, nil},
		{"filtered include and exclude", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Filtered(workspace(t), toolsets.Filter{Include: []string{"read_file"}, Exclude: []string{"list_dir"}})
		}, nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"filtered by nothing", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Filtered(workspace(t), toolsets.Filter{})
		},
			nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"renamed", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Renamed(workspace(t), map[string]string{"read_file": "workspace_read", "absent": "ignored"})
		}, []string{"workspace_read", "write_file", "list_dir"}, []string{"workspace"}, nil, nil},
		{"renamed to an invalid name", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Renamed(workspace(t), map[string]string{"read_file": "read file"})
		}, nil, nil, toolsets.ErrInvalidName, nil},
		{"two renamed to one name", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Renamed(workspace(t), map[string]string{"read_file": "x", "write_file": "x"})
		}, nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"renamed onto another tool", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Renamed(workspace(t), map[string]string{"read_file": "list_dir"})
		}, nil, nil, nil, toolsets.ErrDuplicateTool},
		{"prepared nil keeps", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Prepared(workspace(t), func(context.Context, *toolsets.ToolsetContext, []toolsets.Definition) ([]toolsets.Definition, error) {
				return nil, nil
			})
		}, []string{"read_file", "write_file", "list_dir"}, []string{"workspace"}, nil, nil},
		{"prepared drops and reorders", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Prepared(workspace(t), func(_ context.Context, _ *toolsets.ToolsetContext, defs []toolsets.Definition) ([]toolsets.Definition, error) {
				return []toolsets.Definition{defs[2], defs[0]}, nil
			})
		}, []string{"list_dir", "read_file"}, []string{"workspace"}, nil, nil},
		{"prepared empty exposes none", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Prepared(workspace(t), func(context.Context, *toolsets.ToolsetContext, []toolsets.Definition) ([]toolsets.Definition, error) {
				return []toolsets.Definition{}, nil
			})
		}, nil, []string{"workspace"}, nil, nil},
		{"prepared may not rename", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Prepared(workspace(t), func(_ context.Context, _ *toolsets.ToolsetContext, defs []toolsets.Definition) ([]toolsets.Definition, error) {
				defs[0].Name = "other"
				return defs, nil
			})
		}, nil, nil, nil, toolsets.ErrInvalidWrapper},
		{"with metadata of a func", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Annotated(workspace(t), map[string]any{"f": func() {}})
		}, nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"approval with no names", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.RequireApproval(workspace(t), nil, "") },
			nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"deferred with no names", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Defer(workspace(t), nil, "") },
			nil, nil, toolsets.ErrInvalidWrapper, nil},
		{"chain stops at the first error", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Wrap(workspace(t)).Prefixed("bad prefix").Filtered(toolsets.Filter{Include: []string{"x"}}).Toolset()
		}, nil, nil, toolsets.ErrInvalidName, nil},
		{"chain of nil", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Wrap(nil).Prefixed("a").Toolset() },
			nil, nil, toolsets.ErrInvalidWrapper, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := tt.build(t)
			if !errors.Is(err, tt.buildErr) || (err != nil) != (tt.buildErr != nil) {
				t.Fatalf("build err = %v, want %v", err, tt.buildErr)
			}
			if err != nil {
				return
			}
			tools, groups, err := prepared(t, ts)
			if !errors.Is(err, tt.prepErr) || (err != nil) != (tt.prepErr != nil) {
				t.Fatalf("prepare err = %v, want %v", err, tt.prepErr)
			}
			if diff := cmp.Diff(tt.wantTools, tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantGroups, groups); diff != "" {
				t.Errorf("instruction groups (-want +got):\n%s", diff)
			}
		})
	}
}

// callTool prepares ts in a fresh registry and calls name.
func callTool(t *testing.T, ts toolsets.Toolset, inv toolsets.Invocation) toolsets.Return {
	t.Helper()
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	if inv.Arguments == nil {
		inv.Arguments = json.RawMessage(`{"path":"a.txt"}`)
	}
	return reg.Call(t.Context(), inv)
}

func TestWrapperExecution(t *testing.T) {
	workspace := func(t *testing.T) toolsets.Toolset { return staticSet(t, "workspace", "read_file", "write_file") }
	approved := &toolsets.Approval{DecidedBy: "ui"}
	tests := []struct {
		name     string
		build    func(t *testing.T) (toolsets.Toolset, error)
		inv      toolsets.Invocation
		kind     toolsets.Kind
		content  string
		metadata map[string]any // of the called definition
	}{
		{"renamed reaches the original", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Renamed(workspace(t), map[string]string{"read_file": "workspace_read"})
		}, toolsets.Invocation{Name: "workspace_read"}, toolsets.KindSuccess, `"read_file:a.txt"`, map[string]any{toolsets.MetaOriginalName: "read_file"}},
		{"prefixed reaches the original", func(t *testing.T) (toolsets.Toolset, error) { return toolsets.Prefixed(workspace(t), "ws") },
			toolsets.Invocation{Name: "ws_read_file"}, toolsets.KindSuccess, `"read_file:a.txt"`, nil},
		{"with metadata", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Wrap(workspace(t)).WithMetadata(map[string]any{"bundle": "workspace", "audit": "enabled"}).Toolset()
		}, toolsets.Invocation{Name: "read_file"}, toolsets.KindSuccess, `"read_file:a.txt"`, map[string]any{"bundle": "workspace", "audit": "enabled"}},
		{"prepared changes a description", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Prepared(workspace(t), func(_ context.Context, tc *toolsets.ToolsetContext, defs []toolsets.Definition) ([]toolsets.Definition, error) {
				for i := range defs {
					defs[i].Metadata = map[string]any{"run": tc.RunID}
				}
				return defs, nil
			})
		}, toolsets.Invocation{Name: "read_file"}, toolsets.KindSuccess, `"read_file:a.txt"`, map[string]any{"run": ""}},
		{"approval required suspends", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.RequireApproval(workspace(t), []string{"write_file"}, "review writes")
		}, toolsets.Invocation{Name: "write_file"}, toolsets.KindApprovalRequired, `"approval required: review writes"`, nil},
		{"approval required spares others", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.RequireApproval(workspace(t), []string{"write_file"}, "review writes")
		}, toolsets.Invocation{Name: "read_file"}, toolsets.KindSuccess, `"read_file:a.txt"`, nil},
		{"approval for all", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.RequireApproval(workspace(t), []string{toolsets.AllTools}, "")
		}, toolsets.Invocation{Name: "read_file"}, toolsets.KindApprovalRequired, `"approval required: toolset \"workspace\" requires it"`, nil},
		{"approved call runs", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.RequireApproval(workspace(t), []string{toolsets.AllTools}, "review")
		}, toolsets.Invocation{Name: "write_file", Approval: approved}, toolsets.KindSuccess, `"write_file:a.txt"`, nil},
		{"deferred suspends", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Defer(workspace(t), []string{"read_file"}, "external worker")
		}, toolsets.Invocation{Name: "read_file"}, toolsets.KindCallDeferred, `"call deferred: external worker"`, nil},
		{"deferred resumed with its result", func(t *testing.T) (toolsets.Toolset, error) {
			return toolsets.Defer(workspace(t), []string{"*"}, "external worker")
		}, toolsets.Invocation{Name: "read_file", Deferred: &toolsets.DeferredResult{Value: json.RawMessage(`{"done":true}`)}}, toolsets.KindSuccess, `{"done":true}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := tt.build(t)
			if err != nil {
				t.Fatal(err)
			}
			ret := callTool(t, ts, tt.inv)
			if ret.Kind != tt.kind || string(ret.ModelContent()) != tt.content {
				t.Errorf("return %s %s, want %s %s", ret.Kind, ret.ModelContent(), tt.kind, tt.content)
			}
			p, err := toolsets.Resolve(t.Context(), ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range p.Tools {
				if d := tool.Definition(); d.Name == tt.inv.Name && tt.metadata != nil {
					if diff := cmp.Diff(tt.metadata, d.Metadata); diff != "" {
						t.Errorf("metadata (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

// TestWrapperChainOnDynamic is the combined run: a dynamic toolset,
// prefixed, filtered and approval-required, driven by the lifecycle,
// suspended for approval and re-prepared (refreshed) on resume.
func TestWrapperChainOnDynamic(t *testing.T) {
	read, write, del := namedTool(t, "read_file"), namedTool(t, "write_file"), namedTool(t, "delete_file")
	var entered int
	dyn, err := toolsets.NewDynamic("workspace", toolsets.DynamicFuncs{
		Tools: func(_ context.Context, tc *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
			return []toolsets.Tool{read, write, del}, nil
		},
		Instructions: func(_ context.Context, tc *toolsets.ToolsetContext) ([]string, error) {
			return []string{"Run " + tc.RunID + "."}, nil
		},
		Enter: func(context.Context, *toolsets.ToolsetContext) error { entered++; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := toolsets.Wrap(dyn).
		Prefixed("ws").
		Filtered(toolsets.Filter{Exclude: []string{"ws_delete_file"}}).
		ApprovalRequired([]string{"ws_write_file"}, "review writes").
		Toolset()
	if err != nil {
		t.Fatal(err)
	}
	l := toolsets.NewLifecycle(ts)
	tc := &toolsets.ToolsetContext{RunID: "r1"}
	step := func(want toolsets.LifecycleState) *toolsets.Registry {
		t.Helper()
		p, r, err := l.Prepare(t.Context(), tc)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != want || r.ToolCount != 2 || r.InstructionCount != 1 {
			t.Fatalf("report %+v, want %s with 2 tools and 1 instruction", r, want)
		}
		reg := toolsets.NewRegistry()
		if err := reg.AddToolset(t.Context(), preparedSet{ts.Info(), p}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ws_read_file", "ws_write_file"}, reg.Names()); diff != "" {
			t.Fatalf("names (-want +got):\n%s", diff)
		}
		if got := reg.Instructions(); got != "## ws_workspace\n- Run r1.\n" {
			t.Fatalf("instructions = %q", got)
		}
		return reg
	}
	inv := toolsets.Invocation{CallID: "c1", Name: "ws_write_file", Arguments: json.RawMessage(`{"path":"notes.md"}`), RunID: "r1"}
	if ret := step(toolsets.StateInitialized).Call(t.Context(), inv); ret.Kind != toolsets.KindApprovalRequired {
		t.Fatalf("first call: %s %s", ret.Kind, ret.ModelContent())
	}
	inv.Approval = &toolsets.Approval{DecidedBy: "reviewer"}
	ret := step(toolsets.StateRefreshed).Call(t.Context(), inv)
	if ret.Kind != toolsets.KindSuccess || string(ret.Content) != `"write_file:notes.md"` {
		t.Fatalf("approved call: %s %s", ret.Kind, ret.ModelContent())
	}
	if entered != 1 {
		t.Errorf("entered %d times, want once per run", entered)
	}
}

// preparedSet hands an already prepared inventory to a registry.
type preparedSet struct {
	info toolsets.ToolsetInfo
	p    toolsets.Preparation
}

func (s preparedSet) Info() toolsets.ToolsetInfo { return s.info }
func (s preparedSet) Prepare(context.Context, *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	return s.p, nil
}

func TestWrapperKeepsToolIdentity(t *testing.T) {
	ts, err := toolsets.Wrap(staticSet(t, "workspace", "a", "b")).Prefixed("p").WithMetadata(map[string]any{"k": "v"}).ApprovalRequired([]string{"*"}, "").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	first, err := ts.Prepare(t.Context(), &toolsets.ToolsetContext{RunStep: 0})
	if err != nil {
		t.Fatal(err)
	}
	second, err := ts.Prepare(t.Context(), &toolsets.ToolsetContext{RunStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range first.Tools {
		if first.Tools[i] != second.Tools[i] {
			t.Errorf("tool %d is a new value on the second step", i)
		}
	}
	if ts.Info().Name != "p_workspace" {
		t.Errorf("wrapped info name = %q, want the prefixed name", ts.Info().Name)
	}
}
