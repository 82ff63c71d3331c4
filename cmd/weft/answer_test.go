package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A tool's question is listed by weft approvals with its schema, and
// weft answer decides it on the node: content that does not fit is
// refused, a fitting answer runs the tool again.
func TestAnswerAnElicitation(t *testing.T) {
	n, _ := testNode(t)
	ask, err := toolsets.NewContextFunc("pick_env", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (string, error) {
		if tc.Elicitation == nil {
			return "", toolsets.ElicitationRequired("Which environment?", json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`), nil)
		}
		var c struct {
			Env string `json:"env"`
		}
		_ = json.Unmarshal(tc.Elicitation.Content, &c)
		return "picked " + c.Env, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(llm.ToolCall{ID: "e1", Name: "pick_env", Arguments: json.RawMessage(`{}`)}), llm.ScriptText("done"))
	agent, err := n.rt.NewAgent("asker", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{ask}})
	if err != nil {
		t.Fatal(err)
	}
	sess := agent.NewSession()
	if res, err := sess.Run(t.Context(), "go"); err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("run: %+v, %v", res, err)
	}
	url := "--nats=" + n.url
	wantContains(t, "approvals", mustCLI(t, "approvals", url), "e1", "elicitation", "Which environment?", `"required":["env"]`)
	if _, _, err := cli(t, "answer", "e1", "--content", `{"env":7}`, url); err == nil || !strings.Contains(err.Error(), "wrong_decision") {
		t.Errorf("an answer off the schema: %v, want a wrong_decision refusal", err)
	}
	out := mustCLI(t, "answer", "e1", "--content", `{"env":"staging"}`, "--by", "dana", url)
	wantContains(t, "answer", out, "answer e1 by dana", "completed")
	st, err := sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := sess.Events(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	picked := false
	for _, ev := range evs {
		picked = picked || strings.Contains(string(ev.Data), "picked staging")
	}
	if !picked || st.Active != "" {
		t.Errorf("after the answer: active %q, the tool's return recorded: %v", st.Active, picked)
	}
}
