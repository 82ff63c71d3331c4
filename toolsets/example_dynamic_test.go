package toolsets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weft-run/weft/toolsets"
)

type lookupArgs struct {
	Value string `json:"value"`
}

func lookupTool() toolsets.Tool {
	return must(toolsets.NewFunc("lookup", func(_ context.Context, a lookupArgs) (map[string]string, error) {
		return map[string]string{"value": a.Value}, nil
	}))
}

// WorkspaceToolset is the seed's dynamic toolset: it remembers the run
// it entered and prepares instructions that mention it.
type WorkspaceToolset struct{ runID string }

func (w *WorkspaceToolset) Info() toolsets.ToolsetInfo {
	return toolsets.ToolsetInfo{Name: "workspace", ID: "workspace"}
}

func (w *WorkspaceToolset) Enter(_ context.Context, tc *toolsets.ToolsetContext) error {
	w.runID = tc.RunID
	return nil
}

func (w *WorkspaceToolset) Prepare(_ context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	return toolsets.Preparation{
		Tools:        []toolsets.Tool{lookupTool()},
		Instructions: []toolsets.Instruction{{Group: "workspace", Text: "Preserve run id " + tc.RunID + " in audit notes."}},
	}, nil
}

func (w *WorkspaceToolset) Exit(context.Context, *toolsets.ToolsetContext) error {
	w.runID = ""
	return nil
}

// A dynamic toolset with a lifecycle policy, driven through a run the way
// the runtime drives it; each transition yields a typed report.
func ExampleLifecycle() {
	ts, err := toolsets.WithLifecycle(&WorkspaceToolset{}, toolsets.LifecyclePolicy{
		ReadTimeout: 5 * time.Second,
		ExitTimeout: 2 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	l := toolsets.NewLifecycle(ts)
	tc := &toolsets.ToolsetContext{AgentID: "support", RunID: "run-1", SessionID: "s-1"}
	prep, r1, _ := l.Prepare(context.Background(), tc) // first step: enter + prepare
	_, r2, _ := l.Prepare(context.Background(), tc)    // approval resume: refresh
	r3, _ := l.Exit(context.Background(), tc)          // the run ended
	fmt.Print(toolsets.RenderInstructions(prep.Instructions))
	for _, r := range []toolsets.LifecycleReport{r1, r2, r3} {
		fmt.Println(r.State, r.Name, r.ToolCount, r.InstructionCount)
	}
	// Output:
	// ## workspace
	// - Preserve run id run-1 in audit notes.
	// initialized workspace 1 1
	// refreshed workspace 1 1
	// closed workspace 0 0
}

// The simple dynamic inventory: tools and instructions from functions of
// the toolset context (the seed's get_tools / get_instructions).
func ExampleNewDynamic() {
	ws, err := toolsets.NewDynamic("workspace", toolsets.DynamicFuncs{
		Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
			return []toolsets.Tool{lookupTool()}, nil
		},
		Instructions: func(_ context.Context, tc *toolsets.ToolsetContext) ([]string, error) {
			return []string{"Workspace root is " + tc.WorkspaceRoot + "."}, nil
		},
	}, toolsets.WithID("workspace"))
	if err != nil {
		panic(err)
	}
	p, _ := toolsets.Resolve(context.Background(), ws, &toolsets.ToolsetContext{WorkspaceRoot: "repo"})
	fmt.Println(toolNames(p), p.Instructions[0].Text)
	// Output:
	// [lookup] Workspace root is repo.
}

// Identities are checked without preparing (materialising) anything.
func ExampleValidateForDurability() {
	noID := infoOnly{name: "scratch", prepared: new(int)}
	report := toolsets.ValidateForDurability(&WorkspaceToolset{}, noID)
	fmt.Println(report.Err())
	fmt.Println(toolsets.ValidateIDs(false, &WorkspaceToolset{}, noID).Err())
	// Output:
	// toolsets: invalid toolset identity: toolset #1 "scratch" (id ""): missing_id
	// <nil>
}

// with_lifecycle: a read-only workspace that is neither entered nor exited.
func ExampleWithLifecycle() {
	readonly, err := toolsets.WithLifecycle(&WorkspaceToolset{}, toolsets.LifecyclePolicy{
		SkipEnter: true, SkipExit: true, ReadTimeout: time.Second,
	})
	if err != nil {
		panic(err)
	}
	l := toolsets.NewLifecycle(readonly)
	tc := &toolsets.ToolsetContext{RunID: "run-1"}
	_, r, _ := l.Prepare(context.Background(), tc)
	fmt.Println(r.State)
	r, _ = l.Exit(context.Background(), tc)
	fmt.Println(r.State, r.Message)
	// Output:
	// initialized
	// closed exit skipped by policy
}

func buildWorkspaceTools() toolsets.Toolset {
	ws, err := toolsets.NewFunction("workspace", toolsets.WithID("workspace"))
	if err != nil {
		panic(err)
	}
	if err := toolsets.AddPlain(ws, "read_file", func(_ context.Context, a pathArgs) (string, error) { return a.Path, nil }); err != nil {
		panic(err)
	}
	return ws
}

// A factory builds the visible toolset from the run context, at every
// step by default, or once per run with PerRunStep(false).
func ExampleNewFactory() {
	calls := 0
	workspaceTools, _ := toolsets.NewFactory("workspace", func(context.Context, *toolsets.ToolsetContext) (any, error) {
		calls++
		return buildWorkspaceTools(), nil
	})
	profileTools, _ := toolsets.NewFactory("profile_tools", func(context.Context, *toolsets.ToolsetContext) (any, error) {
		calls++
		return buildWorkspaceTools(), nil
	}, toolsets.PerRunStep(false))
	for step := range 3 {
		tc := &toolsets.ToolsetContext{RunID: "run-1", RunStep: step}
		toolsets.Resolve(context.Background(), workspaceTools, tc)
		toolsets.Resolve(context.Background(), profileTools, tc)
	}
	p, _ := toolsets.Resolve(context.Background(), profileTools, &toolsets.ToolsetContext{RunID: "run-1"})
	fmt.Println(toolNames(p), "factory calls:", calls)
	// Output:
	// [read_file] factory calls: 4
}

// The seed's wrapper methods, chained with Wrap.
func ExampleWrap() {
	workspace := buildWorkspaceTools()
	show := func(c *toolsets.Chain) {
		ts, err := c.Toolset()
		if err != nil {
			fmt.Println(err)
			return
		}
		p, _ := toolsets.Resolve(context.Background(), ts, nil)
		d := p.Tools[0].Definition()
		fmt.Println(d.Name, d.Metadata)
	}
	show(toolsets.Wrap(workspace).Filtered(toolsets.Filter{Include: []string{"read_file"}}))
	show(toolsets.Wrap(workspace).Filtered(toolsets.Filter{Predicate: func(d toolsets.Definition) bool { return strings.Contains(d.Name, "read") }}))
	show(toolsets.Wrap(workspace).Prepared(func(_ context.Context, _ *toolsets.ToolsetContext, defs []toolsets.Definition) ([]toolsets.Definition, error) {
		return defs, nil
	}))
	show(toolsets.Wrap(workspace).Prefixed("workspace"))
	show(toolsets.Wrap(workspace).Renamed(map[string]string{"read_file": "workspace_read"}))
	show(toolsets.Wrap(workspace).WithMetadata(map[string]any{"bundle": "workspace", "audit": "enabled"}))
	show(toolsets.Wrap(workspace).ApprovalRequired([]string{toolsets.AllTools}, "review workspace access"))
	show(toolsets.Wrap(workspace).Deferred([]string{"read_file"}, "external worker"))
	show(toolsets.Wrap(workspace).WithLifecycle(toolsets.LifecyclePolicy{SkipEnter: true, SkipExit: true}))
	show(toolsets.Wrap(workspace).Filtered(toolsets.Filter{Include: []string{"a"}, Exclude: []string{"b"}}))

	reviewed, _ := toolsets.Wrap(workspace).ApprovalRequired([]string{"*"}, "review workspace access").Toolset()
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(context.Background(), reviewed); err != nil {
		panic(err)
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)})
	fmt.Println(ret.Kind, string(ret.ModelContent()))
	// Output:
	// read_file map[]
	// read_file map[]
	// read_file map[]
	// workspace_read_file map[]
	// workspace_read map[original_name:read_file]
	// read_file map[audit:enabled bundle:workspace]
	// read_file map[approval_reason:review workspace access approval_required:true]
	// read_file map[deferred_call:true deferred_reason:external worker]
	// read_file map[]
	// toolsets: invalid toolset wrapper: filter with both an include and an exclude list
	// approval_required "approval required: review workspace access"
}

// Selector entries name tools, toolsets (by name or id) or bundles; an
// entry that matches nothing is refused when the toolset is prepared, and
// already when its tools can be listed without a run.
func ExampleRequireApproval() {
	workspace, err := toolsets.Annotated(buildWorkspaceTools(), map[string]any{toolsets.MetaBundle: "filesystem"})
	if err != nil {
		panic(err)
	}
	for _, entries := range [][]string{{"filesystem"}, {"workspace"}, {"filesytem"}} {
		ts, err := toolsets.RequireApproval(workspace, entries, "review file access")
		if err != nil {
			panic(err)
		}
		if _, _, err := toolsets.KnownTools(ts); err != nil {
			fmt.Println(err)
			continue
		}
		p, _ := toolsets.Resolve(context.Background(), ts, nil)
		d := p.Tools[0].Definition()
		g := toolsets.GatingOf(d)
		fmt.Println(entries, d.Name, g.Approval, g.ApprovalReason)
	}
	// Output:
	// [filesystem] read_file true review file access
	// [workspace] read_file true review file access
	// toolset "workspace": approval_required: entry "filesytem" matches no tool name, toolset name or id, or bundle (tools: read_file; toolsets: workspace, workspace+annotated(bundle); bundles: filesystem)
}
