package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
)

// Start returns once the run has started, while it runs; the run goes on
// after Start's context ends. With WithRunID a retried Start returns the
// same run and starts no other; the id with another prompt is refused.
func TestSessionStart(t *testing.T) {
	rt := newRuntime(t)
	release := make(chan struct{})
	work := tool(t, "work", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		select {
		case <-release:
			return "worked", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	model := llm.NewScripted(llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "work", Arguments: json.RawMessage(`{}`)}), llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{work}}).NewSession()
	ctx, cancel := context.WithCancel(t.Context())
	runID, err := sess.Start(ctx, "go", weft.WithRunID("run-1"))
	cancel()
	if err != nil || runID != "run-1" {
		t.Fatalf("Start = %q, %v", runID, err)
	}
	st, err := sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := st.ActiveRun(); !ok || r.ID != "run-1" || r.Status != weft.StatusRunning {
		t.Fatalf("active run %+v, want run-1 running", r)
	}
	if again, err := sess.Start(t.Context(), "go", weft.WithRunID("run-1")); err != nil || again != "run-1" {
		t.Fatalf("retried Start = %q, %v", again, err)
	}
	if _, err := sess.Start(t.Context(), "another prompt", weft.WithRunID("run-1")); !errors.Is(err, protocol.ErrBadCommand) {
		t.Fatalf("Start of run-1 with another prompt: %v, want ErrBadCommand", err)
	}
	close(release)
	res, err := sess.Wait(t.Context(), "run-1")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	started := 0
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeRunStarted {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d runs started, want 1", started)
	}
}

// Decide returns once the decisions are recorded, and the run goes on
// after its context ends (Resume would cancel it); refusals are Resume's.
func TestSessionDecide(t *testing.T) {
	rt := newRuntime(t)
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "pong", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "ping", Arguments: json.RawMessage(`{}`)}), llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{ping}, ApprovalRequiredTools: []string{"ping"}}).NewSession()
	res := runWaiting(t, sess, "go")
	if _, err := sess.Decide(t.Context(), weft.Approve("nope", "ops", nil)); !errors.Is(err, weft.ErrUnknownDecision) {
		t.Fatalf("Decide on an unknown id: %v, want ErrUnknownDecision", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	runID, err := sess.Decide(ctx, weft.Approve("c1", "ops", nil))
	cancel()
	if err != nil || runID != res.RunID {
		t.Fatalf("Decide = %q, %v", runID, err)
	}
	if res, err := sess.Wait(t.Context(), runID); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if _, err := sess.Decide(t.Context(), weft.Approve("c1", "ops", nil)); !errors.Is(err, weft.ErrNotWaiting) {
		t.Fatalf("Decide after the run ended: %v, want ErrNotWaiting", err)
	}
}
