package weft_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

type ValueArgs struct {
	Value string `json:"value"`
}

func startExample() *weft.Runtime {
	rt, err := weft.Start(context.Background(), weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	return rt
}

func lookupTool() toolsets.Tool {
	t, err := toolsets.NewFunc("lookup", func(_ context.Context, a ValueArgs) (map[string]string, error) {
		return map[string]string{"value": a.Value}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	return t
}

// The seed's static toolset, attached per run.
func Example_toolsetsPerRun() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	workspace, _ := toolsets.New("workspace", []toolsets.Tool{lookupTool()}, toolsets.WithID("workspace"),
		toolsets.WithInstructions("Prefer exact local facts over assumptions."))
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "lookup", `{"value":"x"}`)), llm.ScriptText("ready"))
	agent, _ := rt.NewAgent("per-run", weft.AgentConfig{Model: model})
	res, err := agent.Run(ctx, "lookup x", weft.WithToolsets(workspace))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Output, toolNames(model.Requests()[0]))
	// Output: completed ready [lookup]
}

// The seed's dynamic WorkspaceToolset under a lifecycle policy; the
// lifecycle reports are read from the run's events.
func Example_dynamicToolsetLifecycle() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	dyn, _ := toolsets.NewDynamic("workspace", toolsets.DynamicFuncs{
		Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
			return []toolsets.Tool{lookupTool()}, nil
		},
		Instructions: func(_ context.Context, tc *toolsets.ToolsetContext) ([]string, error) {
			return []string{"Preserve the run id in audit notes."}, nil
		},
	}, toolsets.WithID("workspace"))
	ws, _ := toolsets.WithLifecycle(dyn, toolsets.LifecyclePolicy{ReadTimeout: 5 * time.Second, ExitTimeout: 2 * time.Second})
	agent, _ := rt.NewAgent("dynamic", weft.AgentConfig{Model: llm.AlwaysText("ready"), Toolsets: []toolsets.Toolset{ws}})
	sess := agent.NewSession()
	res, err := sess.Run(ctx, "use workspace")
	if err != nil {
		log.Fatal(err)
	}
	evs, _ := sess.Events(ctx, res.RunID)
	reps, _ := weft.LifecycleReports(evs)
	for _, r := range reps {
		fmt.Println(r.Name, r.ID, r.State, r.ToolCount, r.InstructionCount)
	}
	// Output:
	// workspace workspace initialized 1 1
	// workspace workspace closed 0 0
}

// The seed's toolset factory, cached for the whole run.
func Example_factory() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	calls := 0
	factory, _ := toolsets.NewFactory("profile_tools", func(context.Context, *toolsets.ToolsetContext) (any, error) {
		calls++
		return toolsets.New("workspace", []toolsets.Tool{lookupTool()}, toolsets.WithID("workspace"))
	}, toolsets.PerRunStep(false))
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "lookup", `{"value":"x"}`)), llm.ScriptText("ready"))
	agent, _ := rt.NewAgent("factory", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{factory}})
	res, err := agent.Run(ctx, "lookup x")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, "factory calls:", calls)
	// Output: completed factory calls: 1
}

// The seed's ToolSearchToolset: the model searches, the tool loads for
// its next turn, and the session state records it.
func Example_toolSearch() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	workspace, _ := toolsets.New("workspace", []toolsets.Tool{lookupTool()}, toolsets.WithID("workspace"))
	lib, _ := toolsets.NewLibrary(ctx, workspace)
	search, _ := toolsets.NewSearch(lib, 5)
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("s1", toolsets.SearchToolName, `{"query":"lookup"}`)),
		llm.ScriptToolCalls(call("c1", "lookup", `{"value":"x"}`)),
		llm.ScriptText("ready"))
	agent, _ := rt.NewAgent("search", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{search}})
	sess := agent.NewSession()
	if _, err := sess.Run(ctx, "find a lookup tool"); err != nil {
		log.Fatal(err)
	}
	st, _ := sess.Status(ctx)
	fmt.Println(toolNames(model.Requests()[0]), toolNames(model.Requests()[1]))
	fmt.Println(st.Loaded.LoadedTools)
	// Output:
	// [search_tools] [search_tools lookup]
	// [lookup]
}

// The seed's ToolProxyToolset with a prefix: only the proxy tools are
// offered; the wrapped tool is called through workspace_call_tool.
func Example_toolProxy() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	workspace, _ := toolsets.New("workspace", []toolsets.Tool{lookupTool()}, toolsets.WithID("workspace"))
	lib, _ := toolsets.NewLibrary(ctx, workspace)
	proxy, _ := toolsets.NewProxy(lib, "workspace", 5)
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("c1", "workspace_call_tool", `{"name":"lookup","arguments":{"value":"x"}}`)),
		llm.ScriptText("ready"))
	agent, _ := rt.NewAgent("proxy", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{proxy}})
	res, err := agent.Run(ctx, "lookup x")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, toolNames(model.Requests()[0]))
	fmt.Println(model.Requests()[1].Messages[2].ToolReturns()[0].ContentText())
	// Output:
	// completed [workspace_search_tool workspace_call_tool]
	// {"value":"x"}
}

// The seed's CapabilityBundle: instructions, a tool and a run-start hook
// that marks the run's metadata.
func Example_capabilityBundle() {
	ctx := context.Background()
	rt := startExample()
	defer rt.Close()
	audit, _ := toolsets.NewContextFunc("audit", func(_ context.Context, tc *toolsets.ToolContext, a ValueArgs) (map[string]any, error) {
		marked, _ := tc.Metadata("audit_bundle")
		return map[string]any{"value": a.Value, "audit_bundle": marked}, nil
	})
	bundle := weft.CapabilityBundle{
		Name:         "audit_bundle",
		Instructions: []string{"Prefer concise audit notes."},
		Tools:        []toolsets.Tool{audit},
		OnRunStart: []weft.RunStartHook{func(_ context.Context, rs *weft.RunStart) error {
			rs.Metadata["audit_bundle"] = true
			return nil
		}},
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "audit", `{"value":"v"}`)), llm.ScriptText("ready"))
	agent, _ := rt.NewAgent("bundled", weft.AgentConfig{Model: model, Capabilities: []weft.CapabilityBundle{bundle}})
	if _, err := agent.Run(ctx, "audit v"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(model.Requests()[0].Instructions, "Prefer concise audit notes."))
	fmt.Println(model.Requests()[1].Messages[2].ToolReturns()[0].ContentText())
	// Output:
	// true
	// {"audit_bundle":true,"value":"v"}
}
