package agentspec_test

import (
	"testing"

	"github.com/weft-run/weft/agentspec"
)

func TestLoadFull(t *testing.T) {
	t.Setenv("AGENTSPEC_TEST_KEY", "sk-agentspec-secret-1234")
	f, err := agentspec.Load("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %s", f.Agents[0], f.AgentVersion("support"))
}
