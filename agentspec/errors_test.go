package agentspec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/agentspec"
)

// minimal is a valid file; the cases below change one thing in it.
const minimal = `version: 1
agents:
  - name: support
    model:
      name: openai-compatible:m
      base_url: http://127.0.0.1:1/v1
`

func TestParseErrors(t *testing.T) {
	t.Setenv("AGENTSPEC_SET", "x")
	t.Setenv("AGENTSPEC_EMPTY", "")
	t.Setenv("OPENAI_API_KEY", "")
	tests := []struct {
		name, data  string
		line        int
		field, want string
	}{
		{"empty file", "", 0, "", "the file is empty"},
		{"not yaml", "version: 1\nagents: [\n", 2, "", "not YAML"},
		{"two documents", minimal + "---\nversion: 1\n", 7, "", "one YAML document"},
		{"unknown top field", minimal + "extra: 1\n", 7, "extra", "unknown field"},
		{"unknown agent field", minimal + "    colour: blue\n", 7, "agents[0].colour", "unknown field"},
		{"unknown model field", minimal + "      key: sk-123\n", 7, "agents[0].model.key", "unknown field"},
		{"duplicate field", minimal + "    name: other\n", 7, "agents[0].name", "duplicate field"},
		{"wrong type", minimal + "    instructions: 5\n", 7, "agents[0].instructions", "want a list, got an integer"},
		{"string for int", minimal + "    limits: {requests: ten}\n", 7, "agents[0].limits.requests", "want an integer, got a string"},
		{"bad duration", minimal + "    tool_timeout: soon\n", 7, "agents[0].tool_timeout", "want a duration"},
		{"null value", minimal + "    settings:\n", 7, "agents[0].settings", "null is not a valid value"},
		{"wrong version", strings.Replace(minimal, "version: 1", "version: 2", 1), 1, "version", "does not match the schema: const"},
		{"no agents", "version: 1\nagents: []\n", 2, "agents", "minItems"},
		{"missing model", "version: 1\nagents:\n  - name: a\n", 3, "agents[0]", "required"},
		{"bad agent name", strings.Replace(minimal, "name: support", "name: sup port", 1), 3, "agents[0].name", "pattern"},
		{"bad model name", strings.Replace(minimal, "openai-compatible:m", "gemini:pro", 1), 5, "agents[0].model.name", "pattern"},
		{"temperature out of range", minimal + "    settings: {temperature: 3}\n", 7, "agents[0].settings.temperature", "3 is not at least 0 and at most 2"},
		{"negative limit", minimal + "    limits:\n      tool_calls: -1\n", 8, "agents[0].limits.tool_calls", "-1 is not at least 0"},
		{"two toolset kinds", minimal + "    toolsets:\n      - {filesystem: {root: .}, shell: {root: .}}\n", 8, "agents[0].toolsets[0]", "maxProperties"},
		{"no toolset kind", minimal + "    toolsets:\n      - {}\n", 8, "agents[0].toolsets[0]", "minProperties"},
		{"mcp without command or url", minimal + "    toolsets:\n      - mcp: {name: t}\n", 8, "agents[0].toolsets[0].mcp", "one of command"},
		{"mcp bad mode", minimal + "    toolsets:\n      - mcp: {name: t, url: 'http://x/mcp', mode: lazy}\n", 8, "agents[0].toolsets[0].mcp.mode", "enum"},
		{"bad env name", minimal + "      api_key_env: 'my key'\n", 7, "agents[0].model.api_key_env", "pattern"},
		{"unknown rate limit provider", minimal + "rate_limits:\n  gemini: {requests_per_minute: 1}\n", 8, "rate_limits", "gemini does not equal any of"},
		{"duplicate agent", minimal + "  - name: support\n    model: {name: 'openai-compatible:m', base_url: 'http://x/v1'}\n", 7, "agents[1].name", "declared twice"},
		{"compatible without base_url", "version: 1\nagents:\n  - name: a\n    model:\n      name: openai-compatible:m\n", 5, "agents[0].model.name", "needs base_url"},
		{"empty key variable", minimal + "      api_key_env: AGENTSPEC_EMPTY\n", 7, "agents[0].model.api_key_env", "environment variable AGENTSPEC_EMPTY is empty"},
		{"unset key variable", minimal + "      api_key_env: AGENTSPEC_NEVER_SET\n", 7, "agents[0].model.api_key_env", "AGENTSPEC_NEVER_SET is empty or not set"},
		{"provider's own key variable", "version: 1\nagents:\n  - name: a\n    model:\n      name: openai:gpt-4.1-mini\n", 5, "agents[0].model.name", "OPENAI_API_KEY is empty"},
		{"fallback key variable", minimal + "      fallbacks:\n        - name: openai-compatible:n\n          base_url: http://x/v1\n          api_key_env: AGENTSPEC_EMPTY\n", 10, "agents[0].model.fallbacks[0].api_key_env", "AGENTSPEC_EMPTY"},
		{"mcp header variable", minimal + "    toolsets:\n      - mcp:\n          name: t\n          url: http://x/mcp\n          headers:\n            Authorization: {env: AGENTSPEC_EMPTY, prefix: 'Bearer '}\n", 12, "agents[0].toolsets[0].mcp.headers.Authorization.env", "AGENTSPEC_EMPTY"},
		{"mcp env variable", minimal + "    toolsets:\n      - mcp:\n          name: t\n          command: server\n          env: {TOKEN: AGENTSPEC_EMPTY}\n", 11, "agents[0].toolsets[0].mcp.env.TOKEN", "AGENTSPEC_EMPTY"},
		{"deferred without tools", minimal + "    toolsets:\n      - mcp: {name: t, url: 'http://x/mcp', mode: deferred}\n", 8, "agents[0].toolsets[0].mcp.mode", "needs declared tools"},
		{"args without command", minimal + "    toolsets:\n      - mcp: {name: t, url: 'http://x/mcp', args: [a]}\n", 8, "agents[0].toolsets[0].mcp.name", "for a server with a command"},
		{"missing root", minimal + "    toolsets:\n      - filesystem:\n          root: no-such-dir\n", 9, "agents[0].toolsets[0].filesystem.root", "no-such-dir"},
		{"root is a file", minimal + "    toolsets:\n      - shell: {root: full.yaml}\n", 8, "agents[0].toolsets[0].shell.root", "not a directory"},
		{"remote under search", minimal + "    toolsets:\n      - search:\n          over:\n            - remote: {tools: [a]}\n", 10, "agents[0].toolsets[0].search.over[0].remote", "cannot be searched"},
		{"nested unknown field", minimal + "    toolsets:\n      - proxy:\n          over:\n            - filesystem: {root: ., colour: red}\n", 10, "agents[0].toolsets[0].proxy.over[0].filesystem.colour", "unknown field"},
		{"alias", minimal + "    instructions: &x [a]\n    description: *x\n", 8, "agents[0].description", "aliases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agentspec.Parse("testdata/agents.yaml", []byte(tt.data))
			var se *agentspec.Error
			if !errors.As(err, &se) || !errors.Is(err, agentspec.ErrSpec) {
				t.Fatalf("Parse = %v, want an *agentspec.Error", err)
			}
			if se.File != "testdata/agents.yaml" || se.Line != tt.line || se.Field != tt.field || !strings.Contains(se.Msg, tt.want) {
				t.Errorf("Parse = %#v\n%v\nwant line %d, field %q, a message with %q", se, err, tt.line, tt.field, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "testdata/agents.yaml") {
				t.Errorf("the error %q does not start with the file's name", err)
			}
		})
	}
}
