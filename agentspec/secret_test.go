package agentspec_test

import (
	"strings"
	"testing"

	"github.com/weft-run/weft/agentspec"
)

// No load error shows a secret: neither the value of a variable the file
// names, nor a key pasted where a variable's name belongs.
func TestErrorsHoldNoSecret(t *testing.T) {
	const secret = "sk-proj-agentspec-4f3e2d1c0b9a"
	t.Setenv("AGENTSPEC_SECRET", secret)
	t.Setenv("AGENTSPEC_EMPTY", "")
	files := map[string]string{
		"key pasted as the variable":         minimal + "      api_key_env: " + secret + "\n",
		"key pasted as a header variable":    minimal + "    toolsets:\n      - mcp: {name: t, url: 'http://x/mcp', headers: {Authorization: {env: '" + secret + "'}}}\n",
		"key pasted as an MCP env variable":  minimal + "    toolsets:\n      - mcp: {name: t, command: s, env: {TOKEN: '" + secret + "'}}\n",
		"key pasted as a model name":         strings.Replace(minimal, "openai-compatible:m", secret, 1),
		"key pasted as the version":          strings.Replace(minimal, "version: 1", "version: "+secret, 1),
		"a set variable beside an error":     minimal + "      api_key_env: AGENTSPEC_SECRET\n    limits: {requests: many}\n",
		"a set variable beside an empty one": minimal + "      api_key_env: AGENTSPEC_SECRET\n    toolsets:\n      - mcp: {name: t, command: s, env: {A: AGENTSPEC_SECRET, B: AGENTSPEC_EMPTY}}\n",
	}
	for name, text := range files {
		_, err := agentspec.Parse("agents.yaml", []byte(text))
		if err == nil {
			t.Errorf("%s: Parse succeeded", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "4f3e2d1c0b9a") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}
