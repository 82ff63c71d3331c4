package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// rawTool records the exact argument bytes each call receives.
type rawTool struct {
	mu  sync.Mutex
	got []string
}

func (r *rawTool) Definition() toolsets.Definition {
	return toolsets.Definition{Name: "deploy", Description: "Deploy a ticket's fix.", Parameters: json.RawMessage(
		`{"type":"object","properties":{"environment":{"type":"string"},"ticket":{"type":"string"},"count":{"type":"integer"}},"required":["environment","ticket"],"additionalProperties":false}`)}
}

func (r *rawTool) Call(_ context.Context, _ *toolsets.ToolContext, args json.RawMessage) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, string(args))
	return "deployed", nil
}

// TestApproverSeesWhatTheToolGets: a call whose arguments name a member
// twice is sent back to the model before anyone is asked to approve it;
// an approved call's pending item, its approval.requested event and the
// bytes the tool receives are the same canonical arguments.
func TestApproverSeesWhatTheToolGets(t *testing.T) {
	rt := newRuntime(t)
	deploy := &rawTool{}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("c1", "deploy", `{"environment":"staging","ticket":"T-7","environment":"production"}`)),
		llm.ScriptToolCalls(call("c2", "deploy", `{ "ticket":"T-7", "environment":"\u0070roduction", "count":2.0 }`)),
		llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}, ApprovalRequiredTools: []string{"deploy"}}).NewSession()
	res, err := sess.Run(t.Context(), "deploy T-7")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("Run = %+v, want waiting for one approval", res)
	}
	const canonical = `{"count":2,"environment":"production","ticket":"T-7"}`
	p := res.Pending.Approvals[0]
	if p.ID != "c2" || string(p.Arguments) != canonical {
		t.Fatalf("pending %s shows %s, want c2 with %s", p.ID, p.Arguments, canonical)
	}
	var requested []string
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		switch ev.Type {
		case events.TypeApprovalRequested:
			var d events.ApprovalRequested
			mustDecode(t, ev, &d)
			requested = append(requested, ev.ToolCallID+" "+string(d.Arguments))
		case events.TypeToolReturned:
			if r := returnOf(t, ev); r.CallID == "c1" && (r.Kind != toolsets.KindInvalidArguments || r.Control.Field != "environment") {
				t.Errorf("c1 returned %s (field %q), want invalid_arguments for environment", r.Kind, r.Control.Field)
			}
		}
	}
	if want := []string{"c2 " + canonical}; !slices.Equal(requested, want) {
		t.Errorf("approval requests %q, want %q", requested, want)
	}

	// Reviewed arguments that name a member twice are refused too.
	if _, err := sess.Resume(t.Context(), weft.Approve("c2", "mallory", json.RawMessage(`{"environment":"staging","ticket":"T-7","environment":"production"}`))); !errors.Is(err, weft.ErrWrongDecision) {
		t.Fatalf("Resume with ambiguous reviewed arguments: %v, want ErrWrongDecision", err)
	}
	res, err = sess.Resume(t.Context(), weft.Approve("c2", "alice", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	deploy.mu.Lock()
	defer deploy.mu.Unlock()
	if want := []string{canonical}; !slices.Equal(deploy.got, want) {
		t.Errorf("the tool received %q, want %q", deploy.got, want)
	}
}
