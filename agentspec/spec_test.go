package agentspec_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/agentspec"
)

// The file of every field loads and registers: its toolsets (filesystem,
// shell, a deferred MCP server, a proxy over a read-only filesystem) are
// the agent's, in order.
func TestLoadFull(t *testing.T) {
	t.Setenv("AGENTSPEC_TEST_KEY", "sk-agentspec-secret-1234")
	f, err := agentspec.Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "testdata/full.yaml" || len(f.Agents) != 1 || f.Agents[0].Model.Fallbacks[0].Name != "openai-compatible:test-model-small" {
		t.Fatalf("Load = %+v", f)
	}
	h, err := f.Register(t.Context(), startRuntime(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if d := cmp.Diff([]string{"files", "shell", "tickets", "more"}, h.Agent("support").ToolsetIDList()); d != "" {
		t.Errorf("toolset ids (-want +got):\n%s", d)
	}
}

// The README's example file loads, given the variables it names.
func TestExampleLoads(t *testing.T) {
	for _, env := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "TICKETS_TOKEN"} {
		t.Setenv(env, "set")
	}
	if _, err := agentspec.Load("testdata/example.yaml"); err != nil {
		t.Fatal(err)
	}
}
