package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/replay"
	"github.com/weft-run/weft/toolsets"
)

// deployTool raises ApprovalRequired until approved, and counts its runs.
func deployTool(t *testing.T, runs *atomic.Int32, opts ...toolsets.Option) toolsets.Tool {
	return tool(t, "deploy", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("deploy production", map[string]any{"risk": "high"})
		}
		runs.Add(1)
		return map[string]any{"approved": true, "by": tc.Approval.DecidedBy}, nil
	}, opts...)
}

func TestApproval(t *testing.T) {
	tests := []struct {
		name     string
		decide   func(id string) weft.Decision
		wantRuns int32
		want     string // content of the return the model gets
		isError  bool
	}{
		{name: "approve", decide: func(id string) weft.Decision { return weft.Approve(id, "ui", nil) }, wantRuns: 1, want: `{"approved":true,"by":"ui"}`},
		{name: "deny", decide: func(id string) weft.Decision { return weft.Deny(id, "alice", "not today") }, wantRuns: 0, want: `"The call was denied by alice: not today."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var runs atomic.Int32
			other := tool(t, "status", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "green", nil })
			model := llm.NewScripted(llm.ScriptToolCalls(call("d1", "deploy", `{}`), call("s1", "status", `{}`)), llm.ScriptText("deployed"))
			a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deployTool(t, &runs), other}})
			sess := a.NewSession()
			waiting, err := sess.Run(t.Context(), "deploy")
			if err != nil {
				t.Fatal(err)
			}
			if waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) != 1 || waiting.Pending.Approvals[0].ID != "d1" {
				t.Fatalf("waiting = %+v", waiting)
			}
			if waiting.Pending.Approvals[0].Reason != "deploy production" {
				t.Errorf("reason = %q", waiting.Pending.Approvals[0].Reason)
			}
			res, err := sess.Resume(t.Context(), tt.decide("d1"))
			if err != nil || res.Status != weft.StatusCompleted || res.Output != "deployed" {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			if runs.Load() != tt.wantRuns {
				t.Errorf("deploy ran %d times, want %d", runs.Load(), tt.wantRuns)
			}
			got := map[string]string{}
			for _, p := range lastUserMessage(t, model, 1).ToolReturns() {
				got[p.CallID] = string(p.Content)
			}
			if d := cmp.Diff(map[string]string{"d1": tt.want, "s1": `"green"`}, got); d != "" {
				t.Errorf("returns (-want +got):\n%s", d)
			}
			// The other call of the batch ran once, before the wait.
			n := 0
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				if ev.Type == events.TypeToolReturned && ev.ToolCallID == "s1" {
					n++
				}
				if ev.Type == events.TypeApprovalDecided {
					var d events.ApprovalDecided
					_ = json.Unmarshal(ev.Data, &d)
					if d.By == "" || ev.Time.IsZero() {
						t.Errorf("decision without who/when: %+v", d)
					}
				}
			}
			if n != 1 {
				t.Errorf("status returned %d times, want 1", n)
			}
		})
	}
}

func TestApprovalReviewedArguments(t *testing.T) {
	rt := newRuntime(t)
	type target struct {
		Env string `json:"env"`
	}
	deploy, err := toolsets.NewContextFunc("deploy", func(ctx context.Context, tc *toolsets.ToolContext, a target) (string, error) {
		if tc.Approval == nil {
			return "", toolsets.ApprovalRequired("deploy", nil)
		}
		return a.Env, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("d", "deploy", `{"env":"prod"}`)), llm.ScriptText("ok"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}}).NewSession()
	if _, err := sess.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Resume(t.Context(), weft.Approve("d", "ui", json.RawMessage(`{"env":"staging"}`))); err != nil {
		t.Fatal(err)
	}
	if got := string(lastUserMessage(t, model, 1).ToolReturns()[0].Content); got != `"staging"` {
		t.Errorf("return = %s, want the reviewed arguments' result", got)
	}
}

func TestApprovalPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy []string
	}{
		{name: "star", policy: []string{"*"}},
		{name: "tool name", policy: []string{"ping"}},
		{name: "toolset name", policy: []string{"ops"}},
		{name: "toolset id", policy: []string{"ops-id"}},
		{name: "bundle", policy: []string{"net"}},
		// An entry that matches nothing is refused: it must not leave a
		// tool ungated (see TestGatedToolWaitsThroughRuntime).
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var runs atomic.Int32
			ping := tool(t, "ping", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
				runs.Add(1)
				return "pong", nil
			}, toolsets.WithMetadata(map[string]any{"bundle": "net"}))
			ts, err := toolsets.New("ops", []toolsets.Tool{ping}, toolsets.WithID("ops-id"))
			if err != nil {
				t.Fatal(err)
			}
			model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("ok"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}, ApprovalRequiredTools: tt.policy}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != weft.StatusWaiting {
				t.Fatalf("Run = %+v, want waiting", res)
			}
			if runs.Load() != 0 {
				t.Fatal("the call ran before approval")
			}
			if _, err := sess.Resume(t.Context(), weft.Approve("p", "ui", nil)); err != nil {
				t.Fatal(err)
			}
			if runs.Load() != 1 {
				t.Errorf("ran %d times after approval, want 1", runs.Load())
			}
		})
	}
}

func TestLoosePolicyCoversLooseTools(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	ping := tool(t, "ping", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		runs.Add(1)
		return "pong", nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("ok"))
	res, err := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{ping}, ApprovalRequiredTools: []string{"*"}}).Run(t.Context(), "go")
	if err != nil || res.Status != weft.StatusWaiting || runs.Load() != 0 {
		t.Fatalf("Run = %+v, %v, runs %d", res, err, runs.Load())
	}
}

func TestResumeErrors(t *testing.T) {
	tests := []struct {
		name      string
		decisions []weft.Decision
		want      error
	}{
		{name: "unknown id", decisions: []weft.Decision{weft.Approve("a", "u", nil), weft.Approve("b", "u", nil), weft.Approve("zzz", "u", nil)}, want: weft.ErrUnknownDecision},
		{name: "duplicate", decisions: []weft.Decision{weft.Approve("a", "u", nil), weft.Deny("a", "u", "no"), weft.Approve("b", "u", nil)}, want: weft.ErrDuplicateDecision},
		{name: "missing", decisions: []weft.Decision{weft.Approve("a", "u", nil)}, want: weft.ErrMissingDecisions},
		{name: "wrong kind", decisions: []weft.Decision{weft.Complete("a", "u", 1), weft.Approve("b", "u", nil)}, want: weft.ErrWrongDecision},
		{name: "bad reviewed args", decisions: []weft.Decision{weft.Approve("a", "u", json.RawMessage(`[1]`)), weft.Approve("b", "u", nil)}, want: weft.ErrWrongDecision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var runs atomic.Int32
			m2 := llm.NewScripted(llm.ScriptToolCalls(call("a", "deploy", `{}`), call("b", "deploy2", `{}`)), llm.ScriptText("ok"))
			d2 := tool(t, "deploy2", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
				if tc.Approval == nil {
					return nil, toolsets.ApprovalRequired("again", nil)
				}
				runs.Add(1)
				return "ok", nil
			})
			sess := newAgent(t, rt, weft.AgentConfig{Model: m2, Tools: []toolsets.Tool{deployTool(t, &runs), d2}}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if err != nil || len(res.Pending.Approvals) != 2 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			before := len(streamEvents(t, rt, sess.ID()))
			_, err = sess.Resume(t.Context(), tt.decisions...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Resume error = %v, want %v", err, tt.want)
			}
			if runs.Load() != 0 || len(streamEvents(t, rt, sess.ID())) != before {
				t.Errorf("a refused resume changed something")
			}
			// The run still waits and can be resumed properly.
			res, err = sess.Resume(t.Context(), weft.Approve("a", "u", nil), weft.Approve("b", "u", nil))
			if err != nil || res.Status != weft.StatusCompleted || runs.Load() != 2 {
				t.Fatalf("Resume = %+v, %v, runs %d", res, err, runs.Load())
			}
		})
	}
}

func TestDeferred(t *testing.T) {
	tests := []struct {
		name    string
		decide  weft.Decision
		want    string
		isError bool
	}{
		{name: "complete", decide: weft.Complete("q", "billing", map[string]int{"balance": 12}), want: `{"balance":12}`},
		{name: "fail", decide: weft.Fail("q", "billing", "offline"), want: `"the deferred call failed: offline"`, isError: true},
		{name: "fail with details", decide: weft.FailWith("q", "billing", "exit 2", map[string]any{"exit_code": 2, "stderr": []string{"no route"}}),
			want: `{"error":"the deferred call failed: exit 2","details":{"exit_code":2,"stderr":["no route"]}}`, isError: true},
		{name: "fail with nil details", decide: weft.FailWith("q", "billing", "offline", nil), want: `"the deferred call failed: offline"`, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			q := tool(t, "quote", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
				return nil, toolsets.CallDeferred("ask billing", map[string]any{"queue": "billing"})
			})
			model := llm.NewScripted(llm.ScriptToolCalls(call("q", "quote", `{}`)), llm.ScriptText("ok"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{q}}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Deferred) != 1 || res.Pending.Deferred[0].Metadata["queue"] != "billing" {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if _, err := sess.Resume(t.Context(), tt.decide); err != nil {
				t.Fatal(err)
			}
			p := lastUserMessage(t, model, 1).ToolReturns()[0]
			if string(p.Content) != tt.want || p.IsError != tt.isError {
				t.Errorf("return = %s (error %v), want %s (%v)", p.Content, p.IsError, tt.want, tt.isError)
			}
			// The recorded decision replays to the same events.
			if err := replay.Check(t.Context(), streamEvents(t, rt, sess.ID())); err != nil {
				t.Errorf("replay: %v", err)
			}
			if !strings.Contains(strings.Join(func() []string {
				var s []string
				for _, ty := range types(streamEvents(t, rt, sess.ID())) {
					s = append(s, string(ty))
				}
				return s
			}(), " "), "deferred.requested run.waiting deferred.resolved run.resumed") {
				t.Errorf("missing deferred events: %v", types(streamEvents(t, rt, sess.ID())))
			}
		})
	}
}

// TestDeferredDecisionThatDoesNotEncode: a result or details that do not
// encode as JSON are refused, and the run keeps waiting.
func TestDeferredDecisionThatDoesNotEncode(t *testing.T) {
	for _, d := range []weft.Decision{weft.Complete("q", "billing", make(chan int)), weft.FailWith("q", "billing", "offline", func() {})} {
		t.Run(string(d.Action), func(t *testing.T) {
			rt := newRuntime(t)
			q := tool(t, "quote", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
				return nil, toolsets.CallDeferred("ask billing", nil)
			})
			model := llm.NewScripted(llm.ScriptToolCalls(call("q", "quote", `{}`)), llm.ScriptText("ok"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{q}}).NewSession()
			if res, err := sess.Run(t.Context(), "go"); err != nil || res.Status != weft.StatusWaiting {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if _, err := sess.Resume(t.Context(), d); !errors.Is(err, weft.ErrWrongDecision) {
				t.Errorf("Resume = %v, want ErrWrongDecision", err)
			}
			st, err := sess.Status(t.Context())
			if r, ok := st.ActiveRun(); err != nil || !ok || r.Status != weft.StatusWaiting || len(r.Pending.Deferred) != 1 {
				t.Errorf("after the refusal: %+v, %v; want the run waiting for q", st, err)
			}
		})
	}
}
