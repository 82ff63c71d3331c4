package agentspec_test

import (
	"strings"
	"testing"

	"github.com/weft-run/weft/agentspec"
)

const twoAgents = `version: 1
rate_limits:
  openai-compatible: {requests_per_minute: 60}
agents:
  - name: a
    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}
    instructions: [Be brief.]
  - name: b
    model: {name: 'anthropic:claude-sonnet-4-5', api_key_env: AGENTSPEC_V_KEY}
`

// An agent's version changes with its declaration (and the rate limit
// it shares), and with nothing else of the file.
func TestAgentVersion(t *testing.T) {
	t.Setenv("AGENTSPEC_V_KEY", "x")
	parse := func(text string) *agentspec.File {
		t.Helper()
		f, err := agentspec.Parse("agents.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := parse(twoAgents)
	va, vb := base.AgentVersion("a"), base.AgentVersion("b")
	if !strings.HasPrefix(va, "sha256:") || len(va) != len("sha256:")+16 || va == vb {
		t.Fatalf("versions %q, %q: want two distinct sha256: digests", va, vb)
	}
	if base.AgentVersion("c") != "" {
		t.Error("an undeclared agent has a version")
	}
	tests := []struct {
		name             string
		text             string
		changeA, changeB bool
	}{
		{"same file, other comments and layout", "# agents\n" + strings.Replace(twoAgents, "[Be brief.]", "\n      - Be brief.", 1), false, false},
		{"agents in another order", `version: 1
rate_limits:
  openai-compatible: {requests_per_minute: 60}
agents:
  - name: b
    model: {name: 'anthropic:claude-sonnet-4-5', api_key_env: AGENTSPEC_V_KEY}
  - name: a
    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}
    instructions: [Be brief.]
`, false, false},
		{"a's instructions", strings.Replace(twoAgents, "Be brief.", "Be thorough.", 1), true, false},
		{"b's key variable", strings.Replace(twoAgents, "AGENTSPEC_V_KEY", "PATH", 1), false, true},
		{"the rate limit a shares", strings.Replace(twoAgents, "requests_per_minute: 60", "requests_per_minute: 30", 1), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parse(tt.text)
			if got := f.AgentVersion("a") != va; got != tt.changeA {
				t.Errorf("a's version changed: %v, want %v", got, tt.changeA)
			}
			if got := f.AgentVersion("b") != vb; got != tt.changeB {
				t.Errorf("b's version changed: %v, want %v", got, tt.changeB)
			}
		})
	}
	if d := base.Versions(); d["a"] != va || d["b"] != vb || len(d) != 2 {
		t.Errorf("Versions = %v", d)
	}
}
