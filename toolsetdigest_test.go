package weft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// digesting is a dynamic toolset that sums up what it offers
// (toolsets.Digester): a new digest at every preparation, the same tools.
type digesting struct {
	*toolsets.Dynamic
	steps atomic.Int32
}

func (d *digesting) Digest(string) string { return fmt.Sprintf("sha256:step%d", d.steps.Load()) }

// A toolset's digest is recorded in toolset.initialized, and a change of
// it between steps is recorded as toolset.refreshed even when the tool
// names stay the same (a schema changed).
func TestToolsetDigestChangesAreRecorded(t *testing.T) {
	rt := newRuntime(t)
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "pong", nil })
	ts := &digesting{}
	dyn, err := toolsets.NewDynamic("live", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
		ts.steps.Add(1)
		return []toolsets.Tool{ping}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Dynamic = dyn
	model := llm.NewScripted(llm.ScriptToolCalls(llm.ToolCall{ID: "p1", Name: "ping", Arguments: json.RawMessage(`{}`)}), llm.ScriptText("done"))
	s := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}}).NewSession()
	if _, err := s.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, ev := range streamEvents(t, rt, s.ID()) {
		switch ev.Type {
		case events.TypeToolsetInitialized, events.TypeToolsetRefreshed:
			var d struct {
				Digest string   `json:"digest"`
				Tools  []string `json:"tools"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			digests = append(digests, string(ev.Type)+" "+d.Digest)
		}
	}
	want := []string{"toolset.initialized sha256:step1", "toolset.refreshed sha256:step2"}
	if fmt.Sprint(digests) != fmt.Sprint(want) {
		t.Errorf("toolset reports %q, want %q", digests, want)
	}
}
