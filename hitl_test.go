package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
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

// runWaiting runs prompt in sess and checks that the run waits.
func runWaiting(t *testing.T, sess *weft.Session, prompt string, opts ...weft.RunOption) *weft.Result {
	t.Helper()
	res, err := sess.Run(t.Context(), prompt, opts...)
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	return res
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

// Issue 11 point 12: a refused resume changes nothing and runs nothing,
// answers with a typed error, and is recorded as decision.refused saying
// who tried what and why.
func TestResumeErrors(t *testing.T) {
	approveAll := func(res *weft.Result, by string) []weft.Decision {
		var ds []weft.Decision
		for _, p := range res.Pending.Approvals {
			ds = append(ds, weft.Approve(p.ID, by, nil))
		}
		return ds
	}
	tests := []struct {
		name string
		// before runs before the refused resume (nil: none); it returns
		// the result the run waits with.
		before    func(t *testing.T, sess *weft.Session, res *weft.Result) *weft.Result
		decisions []weft.Decision
		want      error
		code      string
	}{
		{name: "unknown id", decisions: []weft.Decision{weft.Approve("a", "mallory", nil), weft.Approve("b", "mallory", nil), weft.Approve("zzz", "mallory", nil)},
			want: weft.ErrUnknownDecision, code: "unknown_decision"},
		{name: "a call of another session", decisions: []weft.Decision{weft.Approve("a", "mallory", nil), weft.Approve("b", "mallory", nil), weft.Approve("other_1", "mallory", nil)},
			want: weft.ErrUnknownDecision, code: "unknown_decision"},
		{name: "duplicate", decisions: []weft.Decision{weft.Approve("a", "mallory", nil), weft.Deny("a", "mallory", "no"), weft.Approve("b", "mallory", nil)},
			want: weft.ErrDuplicateDecision, code: "duplicate_decision"},
		{name: "missing decisions for the batch", decisions: []weft.Decision{weft.Approve("a", "mallory", nil)},
			want: weft.ErrMissingDecisions, code: "missing_decisions"},
		{name: "wrong kind", decisions: []weft.Decision{weft.Complete("a", "mallory", 1), weft.Approve("b", "mallory", nil)},
			want: weft.ErrWrongDecision, code: "wrong_decision"},
		{name: "reviewed arguments not an object", decisions: []weft.Decision{weft.Approve("a", "mallory", json.RawMessage(`[1]`)), weft.Approve("b", "mallory", nil)},
			want: weft.ErrWrongDecision, code: "wrong_decision"},
		{name: "reviewed arguments that fail the tool's schema", decisions: []weft.Decision{weft.Approve("a", "mallory", json.RawMessage(`{"env":"prod"}`)), weft.Approve("b", "mallory", nil)},
			want: weft.ErrWrongDecision, code: "wrong_decision"},
		{name: "already decided", decisions: []weft.Decision{weft.Approve("a", "mallory", nil), weft.Approve("c", "mallory", nil)},
			before: func(t *testing.T, sess *weft.Session, res *weft.Result) *weft.Result {
				res, err := sess.Resume(t.Context(), approveAll(res, "alice")...)
				if err != nil || len(res.Pending.Approvals) != 1 || res.Pending.Approvals[0].ID != "c" {
					t.Fatalf("Resume = %+v, %v; want the run waiting for c", res, err)
				}
				return res
			},
			want: weft.ErrAlreadyDecided, code: "already_decided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var runs atomic.Int32
			d2 := tool(t, "deploy2", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
				if tc.Approval == nil {
					return nil, toolsets.ApprovalRequired("again", nil)
				}
				runs.Add(1)
				return "ok", nil
			})
			m2 := llm.NewScripted(llm.ScriptToolCalls(call("a", "deploy", `{}`), call("b", "deploy2", `{}`)), llm.ScriptToolCalls(call("c", "deploy", `{}`)), llm.ScriptText("ok"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: m2, Tools: []toolsets.Tool{deployTool(t, &runs), d2}}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if err != nil || len(res.Pending.Approvals) != 2 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			// Another session waits for its own call other_1.
			var otherRuns atomic.Int32
			otherAgent, err := rt.NewAgent("other", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptToolCalls(call("other_1", "deploy", `{}`)), llm.ScriptText("ok")),
				Tools: []toolsets.Tool{deployTool(t, &otherRuns)}})
			if err != nil {
				t.Fatal(err)
			}
			other := otherAgent.NewSession()
			if res, err := other.Run(t.Context(), "go"); err != nil || len(res.Pending.Approvals) != 1 {
				t.Fatalf("other Run = %+v, %v", res, err)
			}
			otherBefore := streamEvents(t, rt, other.ID())
			if tt.before != nil {
				res = tt.before(t, sess, res)
			}
			ran := runs.Load()
			before := streamEvents(t, rt, sess.ID())

			_, err = sess.Resume(t.Context(), tt.decisions...)
			var ce *actors.CommandError
			if !errors.Is(err, tt.want) || !errors.As(err, &ce) || ce.Code != tt.code {
				t.Fatalf("Resume error = %v, want %v (code %s)", err, tt.want, tt.code)
			}
			if runs.Load() != ran || otherRuns.Load() != 0 {
				t.Errorf("a refused resume ran a tool")
			}
			after := streamEvents(t, rt, sess.ID())
			if len(after) != len(before)+1 {
				t.Fatalf("a refused resume appended %v; want one decision.refused", types(after[len(before):]))
			}
			ev := after[len(before)]
			d, err := events.DecodeAs[events.DecisionRefused](ev)
			if err != nil || ev.Type != events.TypeDecisionRefused {
				t.Fatalf("appended %s: %v", ev.Type, err)
			}
			if ev.RunID != res.RunID || d.Code != tt.code || d.Message == "" {
				t.Errorf("decision.refused run %q code %q message %q; want run %q code %q and a message", ev.RunID, d.Code, d.Message, res.RunID, tt.code)
			}
			var want []events.RefusedDecision
			for _, x := range tt.decisions {
				rd := events.RefusedDecision{ID: x.ID, Action: string(x.Action), By: x.By, Reason: x.Reason, Arguments: x.Arguments}
				if len(x.Result) > 0 {
					rd.Result = x.Result
				}
				want = append(want, rd)
			}
			if diff := cmp.Diff(want, d.Decisions); diff != "" {
				t.Errorf("refused decisions (-want +got):\n%s", diff)
			}
			if got := streamEvents(t, rt, other.ID()); len(got) != len(otherBefore) {
				t.Errorf("the other session's log changed: %v", types(got[len(otherBefore):]))
			}
			// The run still waits and can be resumed properly.
			for res.Status == weft.StatusWaiting {
				if res, err = sess.Resume(t.Context(), approveAll(res, "alice")...); err != nil {
					t.Fatal(err)
				}
			}
			if res.Status != weft.StatusCompleted || runs.Load() != 3 {
				t.Fatalf("Resume = %+v, runs %d; want completed after 3 runs", res, runs.Load())
			}
		})
	}
}

// Reviewed arguments are checked against the tool's schema also when the
// run's tools are not prepared on the node that gets the decision (here a
// runtime started again on the same store): the resume waits while they
// are prepared, from the agent's own tools or from a toolset. The stream,
// with its decision.refused, loads again after another restart.
func TestReviewedArgumentsCheckedAfterRestart(t *testing.T) {
	type envArgs struct {
		Env string `json:"env"`
	}
	for _, inToolset := range []bool{false, true} {
		t.Run(map[bool]string{false: "agent tool", true: "toolset tool"}[inToolset], func(t *testing.T) {
			store := memstore.New()
			t.Cleanup(func() { store.Close() })
			var ran []string
			var mu sync.Mutex
			model := llm.NewScripted(llm.ScriptToolCalls(call("d1", "deploy", `{"env":"prod"}`)), llm.ScriptText("ok"))
			config := func(t *testing.T) weft.AgentConfig {
				deploy, err := toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, a envArgs) (string, error) {
					if tc.Approval == nil {
						return "", toolsets.ApprovalRequired("deploy "+a.Env, nil)
					}
					mu.Lock()
					ran = append(ran, a.Env)
					mu.Unlock()
					return "deployed to " + a.Env, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				cfg := weft.AgentConfig{Model: model}
				if inToolset {
					cfg.Toolsets = []toolsets.Toolset{staticToolset(t, "ops", deploy)}
				} else {
					cfg.Tools = []toolsets.Tool{deploy}
				}
				return cfg
			}
			start := func() (*weft.Runtime, *weft.Agent) {
				rt := startOn(t, store)
				a, err := rt.NewAgent("deployer", config(t))
				if err != nil {
					t.Fatal(err)
				}
				return rt, a
			}
			rt1, a1 := start()
			sess := a1.NewSession()
			runWaiting(t, sess, "go")
			if err := rt1.Close(); err != nil {
				t.Fatal(err)
			}
			rt2, a2 := start()
			sess = a2.Session(sess.ID())
			_, err := sess.Resume(t.Context(), weft.Approve("d1", "mallory", json.RawMessage(`{"env":7}`)))
			if !errors.Is(err, weft.ErrWrongDecision) {
				t.Fatalf("Resume with arguments that fail the schema: %v, want ErrWrongDecision", err)
			}
			evs := streamEvents(t, rt2, sess.ID())
			if last := evs[len(evs)-1]; last.Type != events.TypeDecisionRefused {
				t.Fatalf("last event %s, want decision.refused", last.Type)
			}
			// A stream that holds a refusal loads again after a restart.
			if err := rt2.Close(); err != nil {
				t.Fatal(err)
			}
			_, a3 := start()
			sess = a3.Session(sess.ID())
			res, err := sess.Resume(t.Context(), weft.Approve("d1", "alice", json.RawMessage(`{"env":"staging"}`)))
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if d := cmp.Diff([]string{"staging"}, ran); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
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
