package weft_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// renamings offer an agent tool named "helper" under another name: the
// wrappers that rename tools must not let it escape the sub-run limits or
// the cancellation of its children. The first offers it as is, under its
// own name.
var renamings = []struct {
	name   string
	called string // the name the model calls the tool by
	wrap   func(toolsets.Toolset) (toolsets.Toolset, error)
}{
	{"as is", "helper", func(ts toolsets.Toolset) (toolsets.Toolset, error) { return ts, nil }},
	{"prefixed", "team_helper", func(ts toolsets.Toolset) (toolsets.Toolset, error) { return toolsets.Prefixed(ts, "team") }},
	{"renamed", "assistant", func(ts toolsets.Toolset) (toolsets.Toolset, error) {
		return toolsets.Renamed(ts, map[string]string{"helper": "assistant"})
	}},
}

// renamedAgentTool returns agent tool at offered through a toolset that
// rename wraps.
func renamedAgentTool(t *testing.T, at toolsets.Tool, wrap func(toolsets.Toolset) (toolsets.Toolset, error)) toolsets.Toolset {
	t.Helper()
	ts, err := toolsets.New("agents", []toolsets.Tool{at})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wrap(ts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRenamedAgentToolFanOut: the calls of an agent tool past its fan-out
// limit are refused with a *SubrunLimitError the model sees as a user
// error, under its own name or another.
func TestRenamedAgentToolFanOut(t *testing.T) {
	for _, rn := range renamings {
		t.Run(rn.name, func(t *testing.T) {
			rt := newRuntime(t)
			helper := newAgentNamed(t, rt, "helper", weft.AgentConfig{Model: llm.AlwaysText("ok")})
			ts := renamedAgentTool(t, agentTool(t, helper, weft.WithMaxFanOut(2)), rn.wrap)
			boss := newAgentNamed(t, rt, "boss", weft.AgentConfig{Model: delegating(rn.called, "a", "b", "c"), Toolsets: []toolsets.Toolset{ts}})
			sess, res := runSettled(t, boss, "go")
			if res.Status != weft.StatusCompleted {
				t.Fatalf("parent %s %v", res.Status, res.Err)
			}
			kinds := returnKinds(t, rt, sess.ID())
			if kinds["c1"] != toolsets.KindSuccess || kinds["c2"] != toolsets.KindSuccess || kinds["c3"] != toolsets.KindUserError {
				t.Errorf("returns %v; want the third refused", kinds)
			}
			if !strings.Contains(res.Output, "fan-out limit of 2") {
				t.Errorf("the model did not see the limit: %q", res.Output)
			}
		})
	}
}

// TestRenamedAgentToolCancelPropagates: cancelling the parent cancels the
// child of a renamed agent tool's call.
func TestRenamedAgentToolCancelPropagates(t *testing.T) {
	for _, rn := range renamings {
		t.Run(rn.name, func(t *testing.T) {
			rt := newRuntime(t)
			helper := newAgentNamed(t, rt, "helper", weft.AgentConfig{Model: toolThenText("deploy", "deployed"), Tools: []toolsets.Tool{deployTool(t, nil)}})
			ts := renamedAgentTool(t, agentTool(t, helper), rn.wrap)
			lead := newAgentNamed(t, rt, "lead", weft.AgentConfig{Model: delegating(rn.called, "prod"), Toolsets: []toolsets.Toolset{ts}})
			sess, res := runSettled(t, lead, "ship it")
			if len(res.Subruns) != 1 {
				t.Fatalf("no child waits: %+v", res)
			}
			cancelParentAndWaitChild(t, sess, res, helper, 5*time.Second)
		})
	}
}
