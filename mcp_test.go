package weft_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// mcpSecret is a credential in the environment that no event may hold.
const mcpSecret = "ghp-weft-test-secret-0815"

// seedGitHub is the seed's McpToolset example, in deferred mode.
func seedGitHub(t *testing.T, annotations *mcp.Annotations) toolsets.Toolset {
	t.Helper()
	t.Setenv("WEFT_TEST_GITHUB_TOKEN", mcpSecret)
	ts, err := mcp.NewDeferred(mcp.Config{
		Name:                "github",
		Transport:           mcp.StreamableHTTP("https://mcp.example.com/mcp"),
		Headers:             map[string]mcp.Value{"authorization": mcp.Bearer("WEFT_TEST_GITHUB_TOKEN")},
		ToolPrefix:          "github",
		IncludeInstructions: true,
		Instructions:        "Prefer repository-grounded evidence for repository tasks.",
		Tools: []mcp.ToolSpec{{
			Name:        "search",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
			Description: "Search repositories.",
			Annotations: annotations,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// Deferred mode: the call suspends the run with the MCP request (and no
// credential); Complete and Fail resume it.
func TestMCPDeferred(t *testing.T) {
	tests := []struct {
		name   string
		decide weft.Decision
		want   string
	}{
		{name: "complete", decide: weft.Complete("q1", "host", map[string]any{"items": 1}), want: `{"items":1}`},
		{name: "fail", decide: weft.Fail("q1", "host", "server down"), want: `"the deferred call failed: server down"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			model := llm.NewScripted(llm.ScriptToolCalls(call("q1", "github_search", `{"query":"weft"}`)), llm.ScriptText("found"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{seedGitHub(t, &mcp.Annotations{ReadOnly: mcp.Hint(true)})}}).NewSession()
			res, err := sess.Run(t.Context(), "find weft")
			if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Deferred) != 1 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			item := res.Pending.Deferred[0]
			req, ok := mcp.RequestOf(item.Metadata)
			if !ok || item.Toolset != "github" || item.Tool != "github_search" {
				t.Fatalf("pending item = %+v", item)
			}
			want := mcp.Request{Server: "github", Transport: mcp.KindStreamableHTTP, Tool: "search", Arguments: json.RawMessage(`{"query":"weft"}`)}
			if d := cmp.Diff(want, req); d != "" {
				t.Errorf("request (-want +got):\n%s", d)
			}
			if !strings.Contains(model.Requests()[0].Instructions, "## mcp:github\n- Prefer repository-grounded evidence") {
				t.Errorf("instructions = %q", model.Requests()[0].Instructions)
			}
			res, err = sess.Resume(t.Context(), tt.decide)
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			if got := string(lastUserMessage(t, model, 1).ToolReturns()[0].Content); got != tt.want {
				t.Errorf("return = %s, want %s", got, tt.want)
			}
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				if strings.Contains(string(ev.Data), mcpSecret) || strings.Contains(string(ev.Data), "mcp.example.com") {
					t.Errorf("%s holds a credential or the URL: %s", ev.Type, ev.Data)
				}
			}
		})
	}
}

// A declared tool without annotations may be destructive: it waits for
// approval, then for the host's result.
func TestMCPDeferredDestructiveNeedsApproval(t *testing.T) {
	rt := newRuntime(t)
	model := llm.NewScripted(llm.ScriptToolCalls(call("q1", "github_search", `{"query":"weft"}`)), llm.ScriptText("found"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{seedGitHub(t, nil)}}).NewSession()
	res, err := sess.Run(t.Context(), "find weft")
	if err != nil || len(res.Pending.Approvals) != 1 || len(res.Pending.Deferred) != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	res, err = sess.Resume(t.Context(), weft.Approve("q1", "ui", nil))
	if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Deferred) != 1 {
		t.Fatalf("after approval = %+v, %v", res, err)
	}
	res, err = sess.Resume(t.Context(), weft.Complete("q1", "host", "ok"))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("after completion = %+v, %v", res, err)
	}
}

// Live mode through the runtime: the reference server's progress
// notifications are tool.progress events, and the toolset's lifecycle is
// in the log.
func TestMCPLiveProgressEvents(t *testing.T) {
	node, err := exec.LookPath("node")
	script := filepath.Join("toolsets", "mcp", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, serr := os.Stat(script); err != nil || serr != nil {
		msg := "node or server-everything missing: run `npm install --no-save --no-package-lock` in toolsets/mcp/testdata/npm"
		if os.Getenv("WEFT_MCP_SERVERS") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ts, err := mcp.New(mcp.Config{Name: "everything", Transport: mcp.Stdio(node, script, "stdio")})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	rt := newRuntime(t)
	model := llm.NewScripted(llm.ScriptToolCalls(call("p", "trigger-long-running-operation", `{"duration":0.3,"steps":3}`)), llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}}).NewSession()
	res, err := sess.Run(context.Background(), "go")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	var progress int
	seen := map[events.Type]bool{}
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		seen[ev.Type] = true
		if ev.Type == events.TypeToolProgress {
			var p events.ToolProgress
			_ = json.Unmarshal(ev.Data, &p)
			if p.Name == mcp.ProgressName && ev.ToolCallID == "p" {
				progress++
			}
		}
	}
	if progress == 0 || !seen[events.TypeToolsetInitialized] || !seen[events.TypeToolsetClosed] {
		t.Errorf("progress events %d, initialized %v, closed %v", progress, seen[events.TypeToolsetInitialized], seen[events.TypeToolsetClosed])
	}
}
