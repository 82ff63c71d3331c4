package agentspec

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets/mcp"
)

// An MCP entry becomes the mcp.Config it declares: variables by name,
// the command's directory in the spec file's, the transport its fields
// say.
func TestMCPConfig(t *testing.T) {
	t.Setenv("AGENTSPEC_GH", "ghp-secret")
	t.Setenv("AGENTSPEC_TK", "tk-secret")
	spec := `version: 1
agents:
  - name: a
    model: {name: 'openai-compatible:m', base_url: 'http://x/v1'}
    toolsets:
      - mcp: {name: github, id: gh-1, command: github-mcp-server, args: [stdio], dir: tools, env: {GITHUB_TOKEN: AGENTSPEC_GH}, tool_prefix: gh, shared: true, trust_destructive: true, timeout: 30s}
      - mcp:
          name: tickets
          url: http://127.0.0.1:1/sse
          transport: sse
          headers: {Authorization: {env: AGENTSPEC_TK, prefix: "Bearer "}}
          mode: deferred
          tools: [{name: close, description: Close., parameters: {type: object}, approval_required: true}]
      - mcp: {name: docs, url: 'http://127.0.0.1:1/mcp'}
`
	f, err := Parse(filepath.Join("specs", "agents.yaml"), []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{f: f, h: &Hosted{}}
	want := []mcp.Config{
		{Name: "github", ID: "gh-1", Transport: mcp.Stdio("github-mcp-server", "stdio").WithDir(filepath.Join("specs", "tools")).WithEnv("GITHUB_TOKEN", mcp.FromEnv("AGENTSPEC_GH")),
			ToolPrefix: "gh", Shared: true, TrustDestructive: true, Timeout: 30 * time.Second},
		{Name: "tickets", Transport: mcp.SSE("http://127.0.0.1:1/sse"), Headers: map[string]mcp.Value{"Authorization": mcp.Bearer("AGENTSPEC_TK")},
			Tools: []mcp.ToolSpec{{Name: "close", Description: "Close.", Parameters: json.RawMessage(`{"type":"object"}`), ApprovalRequired: true}}},
		{Name: "docs", Transport: mcp.StreamableHTTP("http://127.0.0.1:1/mcp")},
	}
	for i, w := range want {
		got, err := b.mcpConfig("p", f.Agents[0].Toolsets[i].MCP)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("toolset %d (-want +got):\n%s", i, d)
		}
	}
}
