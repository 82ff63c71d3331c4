package agentspec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/toolsets"
)

// registerSpec is a valid file whose key variable holds a secret.
const registerSpec = `version: 1
agents:
  - name: support
    model:
      name: openai-compatible:m
      base_url: http://127.0.0.1:1/v1
      api_key_env: AGENTSPEC_REG_KEY
    toolsets:
      - filesystem: {root: work}
`

// Register's errors name the file, the line and the field of what the
// runtime or a toolset refused, and never the key.
func TestRegisterErrors(t *testing.T) {
	const secret = "sk-agentspec-register-0a1b2c3d"
	tests := []struct {
		name   string
		spec   string
		before func(t *testing.T, dir string) // after Load, before Register
		extra  map[string][]toolsets.Tool
		twice  bool
		line   int
		field  string
		want   string
	}{
		{name: "Go tools for an undeclared agent", spec: registerSpec, extra: map[string][]toolsets.Tool{"billing": nil},
			line: 3, field: "agents", want: `agent "billing", which the file does not declare`},
		{name: "approval selector that matches nothing", spec: registerSpec + "    approval_required: [deploy]\n",
			line: 10, field: "agents[0].approval_required", want: "register the agent"},
		{name: "trusted selector that matches nothing", spec: registerSpec + "    trusted_tools:\n      - deploy\n",
			line: 11, field: "agents[0].trusted_tools", want: "register the agent"},
		{name: "agent already registered", spec: registerSpec, twice: true, line: 3, field: "agents[0]", want: "already registered"},
		{name: "stream false for a model that always streams", spec: strings.Replace(registerSpec, "      name: openai-compatible:m\n", "      name: anthropic:claude\n      stream: false\n", 1),
			line: 6, field: "agents[0].model.stream", want: "turning streaming off is for openai and openai-compatible models only"},
		{name: "key emptied after load", spec: registerSpec, before: func(t *testing.T, _ string) { t.Setenv("AGENTSPEC_REG_KEY", "") },
			line: 5, field: "agents[0].model.name", want: "build the model"},
		{name: "root removed after load", spec: registerSpec, before: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "work")); err != nil {
				t.Fatal(err)
			}
		}, line: 9, field: "agents[0].toolsets[0].filesystem.root", want: "open the root"},
		{name: "no worker serves a remote tool", spec: registerSpec + "      - remote: {tools: [lookup], wait: 50ms}\n",
			line: 10, field: "agents[0].toolsets[1].remote.tools", want: "describe the remote tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AGENTSPEC_REG_KEY", secret)
			path := writeSpec(t, tt.spec)
			f, err := agentspec.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.before != nil {
				tt.before(t, filepath.Dir(path))
			}
			rt := startRuntime(t)
			if tt.twice {
				h, err := f.Register(t.Context(), rt, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
			}
			h, err := f.Register(t.Context(), rt, tt.extra)
			if err == nil {
				h.Close()
				t.Fatal("Register succeeded")
			}
			var se *agentspec.Error
			if !errors.As(err, &se) {
				t.Fatalf("Register = %v, want an *agentspec.Error", err)
			}
			if se.File != path || se.Line != tt.line || se.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Register = %v (line %d, field %q); want line %d, field %q, a message with %q", err, se.Line, se.Field, tt.line, tt.field, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}
