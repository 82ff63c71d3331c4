package weft_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestModelNeverReachesHiddenTools: in a run, a model that knows a hidden
// tool's name and description gets it neither from tool search (not
// listed, not offered on the next turn, not in tool_search.initialized)
// nor through the proxy (call_tool answers as for an unknown name), and
// the tool never runs.
func TestModelNeverReachesHiddenTools(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	hidden := tool(t, "purge_fleet", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		runs.Add(1)
		return "purged", nil
	}, toolsets.WithDescription("Erase every disk of the production fleet."), toolsets.WithVisibility(toolsets.Hidden))
	ops, err := toolsets.Wrap(staticToolset(t, "ops", okTool(t, "read_logs", nil), hidden)).Prefixed("prod").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	lib := library(t, ops)
	search, err := toolsets.NewSearch(lib, 5)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := toolsets.NewProxy(lib, "lib", 5)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("s1", toolsets.SearchToolName, `{"query":"prod_purge_fleet erase disk production fleet"}`)),
		llm.ScriptToolCalls(call("p1", "lib_search_tool", `{"query":"prod_purge_fleet erase disk"}`)),
		llm.ScriptToolCalls(call("p2", "lib_call_tool", `{"name":"prod_purge_fleet","arguments":{}}`), call("p3", "lib_call_tool", `{"name":"prod_no_such","arguments":{}}`)),
		llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{search, proxy}}).NewSession()
	res, err := sess.Run(t.Context(), "wipe the fleet")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for i, req := range model.Requests() {
		if got := toolNames(req); slices.Contains(got, "prod_purge_fleet") {
			t.Errorf("request %d offers the hidden tool: %v", i, got)
		}
	}
	if runs.Load() != 0 {
		t.Errorf("the hidden tool ran %d times", runs.Load())
	}
	returns := map[string]string{}
	for _, ev := range runEvents(t, sess, res.RunID) {
		switch ev.Type {
		case events.TypeToolReturned:
			r := returnOf(t, ev)
			returns[r.CallID] = string(r.Kind) + " " + string(r.ModelContent())
		case events.TypeToolSearchInitialized:
			var d events.ToolSearchInitialized
			mustDecode(t, ev, &d)
			if slices.Contains(d.Searchable, "prod_purge_fleet") {
				t.Errorf("the hidden tool is searchable: %v", d.Searchable)
			}
		case events.TypeToolSearchLoaded:
			var d events.ToolSearchLoaded
			mustDecode(t, ev, &d)
			if slices.Contains(d.Tools, "prod_purge_fleet") {
				t.Errorf("the hidden tool is loaded: %v", d.Tools)
			}
		}
	}
	for _, id := range []string{"s1", "p1"} {
		if strings.Contains(returns[id], `"name":"prod_purge_fleet"`) || strings.Contains(returns[id], "Erase") || strings.Contains(returns[id], "now available: prod_purge_fleet") {
			t.Errorf("search %s lists the hidden tool: %s", id, returns[id])
		}
	}
	if got, want := returns["p2"], strings.ReplaceAll(returns["p3"], "prod_no_such", "prod_purge_fleet"); got != want {
		t.Errorf("call of the hidden tool answered %s, an unknown name %s", got, returns["p3"])
	}
}
