package agentspec_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/agentspec"
)

func TestCompare(t *testing.T) {
	t.Setenv("AGENTSPEC_V_KEY", "x")
	prev, err := agentspec.Parse("agents.yaml", []byte(twoAgents+"  - name: c\n    model: {name: 'openai-compatible:m', base_url: 'http://x/v1'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	next, err := agentspec.Parse("agents.yaml", []byte(strings.Replace(twoAgents, "Be brief.", "Be thorough.", 1)+"  - name: d\n    model: {name: 'openai-compatible:m', base_url: 'http://x/v1'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := agentspec.Changes{Added: []string{"d"}, Removed: []string{"c"}, Changed: []string{"a"}, Unchanged: []string{"b"}}
	if d := cmp.Diff(want, agentspec.Compare(prev, next)); d != "" {
		t.Errorf("Compare (-want +got):\n%s", d)
	}
}
