package weft_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/virtual"
	"github.com/weft-run/weft/toolsets/filesystem"
	"github.com/weft-run/weft/toolsets/shell"
)

// TestEnvironmentWriteApproved runs the environment toolsets over a
// virtual environment attached to the agent: the model writes a file,
// the write waits for approval, is approved and runs once, and its
// tool.returned event carries the write's effect with the call's key.
func TestEnvironmentWriteApproved(t *testing.T) {
	rt := newRuntime(t)
	env, err := virtual.New(virtual.Files{"README.md": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := filesystem.New()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := shell.New()
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("r1", filesystem.ReadTool, `{"path":"README.md"}`), call("w1", filesystem.WriteTool, `{"path":"notes/todo.md","content":"ship it\n"}`)),
		llm.ScriptText("written"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Environment: env, Toolsets: []toolsets.Toolset{fs, sh}})
	sess := a.NewSession()
	waiting, err := sess.Run(t.Context(), "note the plan")
	if err != nil {
		t.Fatal(err)
	}
	if waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) != 1 || waiting.Pending.Approvals[0].ID != "w1" {
		t.Fatalf("waiting = %+v", waiting)
	}
	if _, ok := env.Files()["notes/todo.md"]; ok {
		t.Fatal("the write ran before it was approved")
	}
	res, err := sess.Resume(t.Context(), weft.Approve("w1", "alice", nil))
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "written" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if got := env.Files()["notes/todo.md"]; got != "ship it\n" {
		t.Fatalf("notes/todo.md = %q", got)
	}
	var effects []environment.Effect
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type != events.TypeToolReturned {
			continue
		}
		ret := returnOf(t, ev)
		m, ok := ret.Metadata[environment.MetaEffect]
		if !ok {
			continue
		}
		b, _ := json.Marshal(m)
		var e environment.Effect
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		effects = append(effects, e)
	}
	want := []environment.Effect{{Kind: environment.EffectWrite, SessionID: sess.ID(), RunID: res.RunID, CallID: "w1", Tool: filesystem.WriteTool,
		Path: "notes/todo.md", Bytes: 8, SHA256: environment.SHA256([]byte("ship it\n")), Created: true}}
	if d := cmp.Diff(want, effects); d != "" {
		t.Errorf("effects in the log (-want +got):\n%s", d)
	}
}
