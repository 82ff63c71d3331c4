package agentspec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
)

// threeAgents declares planner, researcher and writer; tools is planner's
// agent_tools line, more is appended to the writer.
func threeAgents(tools, more string) string {
	agent := func(name string) string {
		return "  - name: " + name + "\n    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n"
	}
	return "version: 1\nagents:\n" + agent("planner") + tools + agent("researcher") + agent("writer") + more
}

// TestAgentToolsField: agent_tools registers the named agents as tools
// (in dependency order, whatever the file's order); an undeclared agent,
// the agent itself and a cycle are refused at the entry, with its line.
func TestAgentToolsField(t *testing.T) {
	tests := []struct {
		name, data  string
		line        int
		field, want string
	}{
		{"undeclared", threeAgents("    agent_tools: [ghost]\n", ""), 5, "agents[0].agent_tools[0]", `agent "ghost" is not declared`},
		{"itself", threeAgents("    agent_tools: [researcher, planner]\n", ""), 5, "agents[0].agent_tools[1]", "cannot call itself"},
		{"cycle", threeAgents("    agent_tools: [researcher]\n", "    agent_tools:\n      - planner\n"), 11, "agents[2].agent_tools[0]", "cycle: planner -> researcher -> writer -> planner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			if tc.name == "cycle" {
				// researcher calls writer, which calls planner.
				data = strings.Replace(data, "  - name: researcher\n    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n",
					"  - name: researcher\n    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n    agent_tools: [writer]\n", 1)
				tc.line++
			}
			_, err := agentspec.Parse("agents.yaml", []byte(data))
			var se *agentspec.Error
			if !errors.As(err, &se) || se.Line != tc.line || se.Field != tc.field || !strings.Contains(se.Msg, tc.want) {
				t.Fatalf("Parse: %v (line %d, field %q); want line %d, field %q, %q", err, lineOf(se), fieldOf(se), tc.line, tc.field, tc.want)
			}
		})
	}
	t.Run("registers", func(t *testing.T) {
		f, err := agentspec.Parse("agents.yaml", []byte(threeAgents("    agent_tools: [researcher, writer]\n", "")))
		if err != nil {
			t.Fatal(err)
		}
		h, err := f.Register(t.Context(), startRuntime(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		var names []string
		for _, a := range h.Agents {
			names = append(names, a.Name())
		}
		if strings.Join(names, ",") != "planner,researcher,writer" {
			t.Errorf("agents %v, want the file's order", names)
		}
	})
}

func lineOf(e *agentspec.Error) int {
	if e == nil {
		return -1
	}
	return e.Line
}

func fieldOf(e *agentspec.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

// parseFile parses text as agents.yaml.
func parseFile(t *testing.T, text string) *agentspec.File {
	t.Helper()
	f, err := agentspec.Parse("agents.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// registerFile parses text and registers it on rt, closed at the test's
// end.
func registerFile(t *testing.T, rt *weft.Runtime, text string) (*agentspec.File, *agentspec.Hosted) {
	t.Helper()
	f := parseFile(t, text)
	h, err := f.Register(t.Context(), rt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return f, h
}

// withResearcherInstructions gives threeAgents' researcher instructions.
func withResearcherInstructions(text string) string {
	const researcher = "  - name: researcher\n    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n"
	return strings.Replace(text, researcher, researcher+"    instructions: [research]\n", 1)
}

// TestReloadWithAgentTools: a reload that changes an agent and the agent
// it calls as a tool registers both (the callee first) and hosts them in
// the file's order.
func TestReloadWithAgentTools(t *testing.T) {
	rt := startRuntime(t)
	_, h1 := registerFile(t, rt, threeAgents("    agent_tools: [researcher]\n", ""))
	v2 := parseFile(t, withResearcherInstructions(threeAgents("    agent_tools: [researcher]\n    instructions: [plan]\n", "")))
	h2, ch, err := v2.Reload(t.Context(), rt, h1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if strings.Join(ch.Changed, ",") != "planner,researcher" {
		t.Errorf("changed %v", ch.Changed)
	}
	var names []string
	for _, a := range h2.Agents {
		names = append(names, a.Name())
	}
	if strings.Join(names, ",") != "planner,researcher,writer" || h2.Agent("planner").Version() == h1.Agent("planner").Version() {
		t.Errorf("hosted %v", names)
	}
}

// TestReloadOfACallee: a reload that changes only an agent another calls
// as a tool rebuilds the caller too, so new runs of the caller call the
// callee's new version.
func TestReloadOfACallee(t *testing.T) {
	rt := startRuntime(t)
	v1, h1 := registerFile(t, rt, threeAgents("    agent_tools: [researcher]\n", ""))
	v2 := parseFile(t, withResearcherInstructions(threeAgents("    agent_tools: [researcher]\n", "")))
	if v1.AgentVersion("planner") == v2.AgentVersion("planner") {
		t.Error("the caller's version did not change with its callee's")
	}
	h2, ch, err := v2.Reload(t.Context(), rt, h1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if strings.Join(ch.Changed, ",") != "planner,researcher" || strings.Join(ch.Unchanged, ",") != "writer" {
		t.Errorf("changes %+v, want planner and researcher changed, writer not", ch)
	}
	if h2.Agent("planner") == h1.Agent("planner") {
		t.Error("the caller was kept, bound to the callee's old version")
	}
	if v, _ := rt.AgentVersion("planner"); v != v2.AgentVersion("planner") {
		t.Errorf("new runs of planner start with %s, want %s", v, v2.AgentVersion("planner"))
	}
}
