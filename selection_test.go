package weft_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func TestToolSelection(t *testing.T) {
	rt := newRuntime(t)
	var sent atomic.Int32
	email := tool(t, "send_email", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { sent.Add(1); return "sent", nil })
	status := tool(t, "status", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "green", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(call("e1", "send_email", `{}`), call("s1", "status", `{}`)), llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{email, status}})
	res, err := a.NewSession().Run(t.Context(), "go", weft.WithToolSelection("ALL", "-send_email"))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := model.Requests()[0].Tools; len(got) != 1 || got[0].Name != "status" {
		t.Fatalf("offered %v; want status only", got)
	}
	if sent.Load() != 0 {
		t.Fatal("the unselected tool ran")
	}
	for _, r := range lastUserMessage(t, model, 1).ToolReturns() {
		if r.CallID == "e1" && !strings.Contains(string(r.Content), `not selected for this run`) {
			t.Fatalf("the unselected call returned %s", r.Content)
		}
	}
}

func TestToolSelectionErrors(t *testing.T) {
	rt := newRuntime(t)
	hidden := tool(t, "load_adapter", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "x", nil }, toolsets.WithVisibility(toolsets.Hidden))
	status := tool(t, "status", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "green", nil })
	a := newAgent(t, rt, weft.AgentConfig{Model: llm.NewScripted(llm.ScriptText("x"), llm.ScriptText("x")), Tools: []toolsets.Tool{hidden, status}})

	_, err := a.NewSession().Run(t.Context(), "go", weft.WithToolSelection("all"))
	var se *toolsets.SelectionError
	if !errors.As(err, &se) || se.Problem != "malformed" {
		t.Fatalf("malformed: err = %v", err)
	}
	for _, entry := range []string{"+stauts", "+load_adapter"} {
		_, err := a.NewSession().Run(t.Context(), "go", weft.WithToolSelection("SYSTEM", entry))
		if err == nil || !strings.Contains(err.Error(), "policy_error") || !strings.Contains(err.Error(), entry) {
			t.Fatalf("%s: err = %v; want the run failed naming the entry", entry, err)
		}
	}
}
