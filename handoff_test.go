package weft_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestHandoff: the model of triage calls transfer_to_billing; the run
// records run.handoff and its next request goes to billing's model with
// billing's tools, on the same conversation; a tool that only claims a
// handoff in its metadata hands nothing over.
func TestHandoff(t *testing.T) {
	rt := newRuntime(t)
	refund := tool(t, "refund", func(_ context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) { return "refunded", nil })
	billingModel := llm.NewScripted(llm.ScriptToolCalls(call("r1", "refund", `{}`)), llm.ScriptText("refund issued"))
	billing := newAgentNamed(t, rt, "billing", weft.AgentConfig{Model: billingModel, Tools: []toolsets.Tool{refund}, Instructions: []string{"You handle billing."}})
	handoff, err := weft.Handoff(billing)
	if err != nil {
		t.Fatal(err)
	}
	fake := tool(t, "sneaky", func(_ context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		return toolsets.Result{Content: "ok", Metadata: map[string]any{"weft.handoff": "billing"}}, nil
	})
	triageModel := llm.NewScripted(llm.ScriptToolCalls(call("s1", "sneaky", `{}`)), llm.ScriptToolCalls(call("h1", "transfer_to_billing", `{"reason":"refund"}`)))
	notes := staticToolset(t, "triage_notes", tool(t, "note", func(_ context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) { return "", nil }))
	triage := newAgentNamed(t, rt, "triage", weft.AgentConfig{Model: triageModel, Tools: []toolsets.Tool{handoff, fake}, Toolsets: []toolsets.Toolset{notes}})
	sess := triage.NewSession()
	res, err := sess.Run(t.Context(), "I want my money back")
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "refund issued" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	// The previous agent's toolsets exit in the background: their
	// toolset.closed may follow run.completed.
	var handoffs []events.RunHandoff
	closed := 0
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		handoffs, closed = nil, 0
		for _, ev := range streamEvents(t, rt, sess.ID()) {
			if ev.Type == events.TypeToolsetClosed && len(handoffs) == 1 {
				closed++ // triage's toolset, exited at the handoff
			}
			if ev.Type == events.TypeRunHandoff {
				var d events.RunHandoff
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Fatal(err)
				}
				handoffs = append(handoffs, d)
			}
		}
		if closed > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(handoffs) != 1 || handoffs[0] != (events.RunHandoff{From: "triage", To: "billing", ToolCallID: "h1"}) {
		t.Errorf("handoffs %+v", handoffs)
	}
	if closed != 1 {
		t.Errorf("triage's toolset closed %d times after the handoff, want 1", closed)
	}
	reqs := billingModel.Requests()
	if len(reqs) != 2 || reqs[0].Instructions != "You handle billing." || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "refund" {
		t.Fatalf("billing's first request: %+v", reqs)
	}
	if promptOf(reqs[0]) != "I want my money back" {
		t.Errorf("billing does not see the conversation")
	}
	if len(triageModel.Requests()) != 2 {
		t.Errorf("triage asked %d times, want 2", len(triageModel.Requests()))
	}
}

// TestHandoffBetweenVersionedAgents: a run of a versioned agent handed to
// another versioned agent goes on with the new agent's version.
func TestHandoffBetweenVersionedAgents(t *testing.T) {
	rt := newRuntime(t)
	billing := newAgentNamed(t, rt, "billing", weft.AgentConfig{Model: llm.AlwaysText("refund issued"), Version: "b7"})
	handoff, err := weft.Handoff(billing)
	if err != nil {
		t.Fatal(err)
	}
	triage := newAgentNamed(t, rt, "triage", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptToolCalls(call("h1", "transfer_to_billing", `{}`))),
		Tools: []toolsets.Tool{handoff}, Version: "t3"})
	sess := triage.NewSession()
	res, err := sess.Run(t.Context(), "refund")
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "refund issued" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeRunHandoff {
			var d events.RunHandoff
			_ = json.Unmarshal(ev.Data, &d)
			if d.Version != "b7" {
				t.Errorf("run.handoff %+v, want billing's version", d)
			}
		}
	}
}
