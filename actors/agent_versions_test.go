package actors

import (
	"strings"
	"testing"

	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
)

// A host keeps every registered version of an agent: new runs get the
// latest, a run's recorded version is found while it lasts, also after
// the agent is retired; an unversioned agent is registered once, a
// version registered again is the latest again.
func TestAgentVersions(t *testing.T) {
	conn := testNATS(t)
	h := newTestHost(t, HostConfig{Conn: conn(), Store: memstore.New()})
	model := llm.AlwaysText("done")
	v1 := &AgentSpec{Name: "a", Version: "v1", Model: model}
	v2 := &AgentSpec{Name: "a", Version: "v2", Model: model}
	if err := h.Register(v1); err != nil {
		t.Fatal(err)
	}
	if err := h.Register(v2); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("Register of a second version: %v, want already registered (AddVersion adds one)", err)
	}
	if err := h.AddVersion(v2); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Agent("a"); got != v2 {
		t.Errorf("new runs get %v, want v2", got.Version)
	}
	if got, _ := h.AgentVersion("a", "v1"); got != v1 {
		t.Error("v1 is not kept for its runs")
	}
	if _, ok := h.AgentVersion("a", "v3"); ok {
		t.Error("an unregistered version is found")
	}
	for _, tc := range []struct {
		spec *AgentSpec
		want string
	}{
		{&AgentSpec{Name: "a", Model: model}, "has no versions"},
	} {
		if err := h.AddVersion(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q %q) = %v, want %q", tc.spec.Name, tc.spec.Version, err, tc.want)
		}
	}
	if err := h.Register(&AgentSpec{Name: "b", Model: model}); err != nil {
		t.Fatal(err)
	}
	if err := h.AddVersion(&AgentSpec{Name: "b", Version: "v1", Model: model}); err == nil {
		t.Error("an unversioned agent was registered again")
	}
	v1again := &AgentSpec{Name: "a", Version: "v1", Model: model}
	if err := h.AddVersion(v1again); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Agent("a"); got != v1again {
		t.Error("v1 registered again is not the latest")
	}
	if err := h.AddVersion(v2); err != nil {
		t.Fatal(err)
	}
	if err := h.Retire("a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Agent("a"); ok {
		t.Error("a retired agent starts new runs")
	}
	if got, _ := h.AgentVersion("a", "v1"); got != v1again {
		t.Error("a retired agent's runs lost their version")
	}
	if err := h.AddVersion(&AgentSpec{Name: "a", Version: "v3", Model: model}); err != nil {
		t.Fatal(err)
	}
	if err := h.Withdraw("a", "v3"); err != nil {
		t.Fatal(err)
	}
	if got, ok := h.Agent("a"); !ok || got != v2 {
		t.Error("a withdrawn version left v2 not the latest")
	}
	if err := h.Retire("nobody"); err == nil {
		t.Error("retired an unknown agent")
	}
}

// A start naming a version the host does not have is refused; a start
// naming none records the latest.
func TestStartRecordsTheAgentVersion(t *testing.T) {
	conn := testNATS(t)
	h := newTestHost(t, HostConfig{Conn: conn(), Store: memstore.New()})
	model := llm.AlwaysText("done")
	k := core{session: "s", st: NewSessionState("s"), look: h}
	if err := h.Register(&AgentSpec{Name: "a", Version: "v7", Model: model}); err != nil {
		t.Fatal(err)
	}
	d := k.start(StartCommand{RunID: "r1", Agent: "a", Prompt: "hi", Metadata: map[string]any{MetaAgentVersion: "v6"}})
	if len(d.recs) != 0 {
		t.Fatal("a start with an unregistered version was recorded")
	}
	d = k.start(StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"})
	if len(d.recs) != 1 || !strings.Contains(string(d.recs[0].Event.Data), `"agent_version":"v7"`) {
		t.Fatalf("run.started does not record v7: %+v", d.recs)
	}
}
