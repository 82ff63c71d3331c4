package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/projections"
	"github.com/weft-run/weft/toolsets"
)

// promptOf returns the first user prompt of req.
func promptOf(req *llm.Request) string {
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if up, ok := p.(llm.UserPrompt); ok {
				return up.Text
			}
		}
	}
	return ""
}

// delegating is a parent model: its first response calls agent tool
// `tool` once per prompt (in parallel), then it answers with the returns
// joined.
func delegating(tool string, prompts ...string) llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if rets := last.ToolReturns(); len(rets) > 0 {
			var parts []string
			for _, r := range rets {
				parts = append(parts, string(r.Content))
			}
			return &llm.Response{Text: "plan: " + strings.Join(parts, " + ")}, nil
		}
		var calls []llm.ToolCall
		for i, p := range prompts {
			args, _ := json.Marshal(map[string]string{"prompt": p})
			calls = append(calls, llm.ToolCall{ID: "c" + string(rune('1'+i)), Name: tool, Arguments: args})
		}
		return &llm.Response{ToolCalls: calls}, nil
	})
}

// toolThenText is a child model: it calls tool once, then answers text
// and its prompt.
func toolThenText(tool, text string) llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 {
			return &llm.Response{Text: text + " " + promptOf(req)}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "t1", Name: tool, Arguments: json.RawMessage(`{}`)}}}, nil
	})
}

func agentTool(t *testing.T, a *weft.Agent, opts ...weft.AgentToolOption) toolsets.Tool {
	t.Helper()
	tl, err := weft.AgentTool(a, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func settle(t *testing.T, sess *weft.Session, runID string) *weft.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := sess.Settle(ctx, runID)
	if err != nil && res == nil {
		t.Fatalf("Settle: %v", err)
	}
	return res
}

// runSettled runs prompt in a new session of a and returns the session
// and the run's result once it has settled.
func runSettled(t *testing.T, a *weft.Agent, prompt string, opts ...weft.RunOption) (*weft.Session, *weft.Result) {
	t.Helper()
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), prompt, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sess, settle(t, sess, res.RunID)
}

// leadAndDeployer registers a deployer, whose deploy needs an approval and
// counts its runs in runs, and a lead that delegates "prod" to it.
func leadAndDeployer(t *testing.T, rt *weft.Runtime) (lead, deployer *weft.Agent, runs *atomic.Int32) {
	t.Helper()
	runs = new(atomic.Int32)
	deployer = newAgentNamed(t, rt, "deployer", weft.AgentConfig{Model: toolThenText("deploy", "deployed"), Tools: []toolsets.Tool{deployTool(t, runs)}})
	lead = newAgentNamed(t, rt, "lead", weft.AgentConfig{Model: delegating("deployer", "prod"), Tools: []toolsets.Tool{agentTool(t, deployer)}})
	return lead, deployer, runs
}

// TestAgentToolChildrenRunInParallel: two calls of an agent tool in one
// response start two child runs in child sessions, which run at the same
// time; their outputs become the returns of the parent's calls, and the
// children's run.started name the parent.
func TestAgentToolChildrenRunInParallel(t *testing.T) {
	rt := newRuntime(t)
	var both sync.WaitGroup
	both.Add(2)
	lookup := tool(t, "lookup", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		both.Done()
		done := make(chan struct{})
		go func() { both.Wait(); close(done) }()
		select {
		case <-done: // the other child is in its tool too
			return "facts", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, toolsets.NewUserError("the children did not run in parallel", nil)
		}
	})
	researcher := newAgentNamed(t, rt, "researcher", weft.AgentConfig{Model: toolThenText("lookup", "notes on"), Tools: []toolsets.Tool{lookup}})
	planner := newAgentNamed(t, rt, "planner", weft.AgentConfig{Model: delegating("researcher", "tides", "winds"), Tools: []toolsets.Tool{agentTool(t, researcher)}})
	sess, res := runSettled(t, planner, "plan a sail")
	if res.Status != weft.StatusCompleted || res.Output != `plan: "notes on tides" + "notes on winds"` {
		t.Fatalf("parent = %s %q (%v)", res.Status, res.Output, res.Err)
	}
	var children []events.RunStarted
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type != events.TypeDeferredRequested {
			continue
		}
		child := subrunSession(t, ev)
		for _, cev := range streamEvents(t, rt, child) {
			if cev.Type == events.TypeRunStarted {
				var d events.RunStarted
				if err := json.Unmarshal(cev.Data, &d); err != nil {
					t.Fatal(err)
				}
				children = append(children, d)
			}
		}
	}
	if len(children) != 2 {
		t.Fatalf("%d child runs, want 2", len(children))
	}
	for _, d := range children {
		if d.ParentSessionID != sess.ID() || d.ParentRunID != res.RunID || d.ParentToolCallID == "" || d.Depth != 1 || d.Agent != "researcher" {
			t.Errorf("child run.started %+v does not name its parent", d)
		}
	}
	// The tree projection shows the parent with its two children.
	tree := projections.NewTree()
	if _, err := projections.NewRunner(rt.Store(), []projections.Projection{tree}).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	root, ok := tree.Of(projections.RunRef{SessionID: sess.ID(), RunID: res.RunID})
	if !ok || len(root.Children) != 2 || root.Children[0].Status != projections.RunCompleted || root.Children[0].Agent != "researcher" {
		t.Errorf("tree %+v", root)
	}
}

// subrunSession reads the child session a deferred.requested waits for.
func subrunSession(t *testing.T, ev events.Event) string {
	t.Helper()
	var d events.DeferredRequested
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	var md map[string]map[string]any
	if err := json.Unmarshal(d.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	s, _ := md[weft.MetaSubrun]["session_id"].(string)
	if s == "" {
		t.Fatalf("deferred.requested without a sub-run: %s", d.Metadata)
	}
	return s
}

func newAgentNamed(t *testing.T, rt *weft.Runtime, name string, cfg weft.AgentConfig) *weft.Agent {
	t.Helper()
	a, err := rt.NewAgent(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAgentToolChildApproval: a child that needs an approval shows it
// with its parent chain; approving it on the child's session resumes the
// child, whose end resumes the parent.
func TestAgentToolChildApproval(t *testing.T) {
	rt := newRuntime(t)
	lead, deployer, runs := leadAndDeployer(t, rt)
	sess, res := runSettled(t, lead, "ship it")
	if res.Status != weft.StatusWaiting || len(res.Subruns) != 1 {
		t.Fatalf("parent %s with sub-run items %+v; want waiting for one", res.Status, res.Subruns)
	}
	item := res.Subruns[0]
	if item.Kind != weft.PendingApproval || item.Agent != "deployer" || len(item.Parents) != 1 || item.Parents[0].SessionID != sess.ID() || item.Parents[0].RunID != res.RunID {
		t.Fatalf("sub-run item %+v", item)
	}
	if _, err := deployer.Session(item.SessionID).Decide(t.Context(), weft.Approve(item.ID, "alice", nil)); err != nil {
		t.Fatal(err)
	}
	res = settle(t, sess, res.RunID)
	if res.Status != weft.StatusCompleted || res.Output != `plan: "deployed prod"` || runs.Load() != 1 {
		t.Fatalf("parent = %s %q, deploy ran %d times", res.Status, res.Output, runs.Load())
	}
}

// TestAgentToolCancelPropagates: cancelling the parent cancels its child,
// and the parent's waiting call is not settled by it afterwards.
func TestAgentToolCancelPropagates(t *testing.T) {
	rt := newRuntime(t)
	lead, deployer, _ := leadAndDeployer(t, rt)
	sess, res := runSettled(t, lead, "ship it")
	if len(res.Subruns) != 1 {
		t.Fatalf("no child waits: %+v", res)
	}
	cancelParentAndWaitChild(t, sess, res, deployer, 10*time.Second)
}

// cancelParentAndWaitChild cancels res, a run of sess waiting for one
// child run of agent child, and fails t unless the child run is cancelled
// within timeout.
func cancelParentAndWaitChild(t *testing.T, sess *weft.Session, res *weft.Result, child *weft.Agent, timeout time.Duration) {
	t.Helper()
	cs := child.Session(res.Subruns[0].SessionID)
	if err := sess.Cancel(t.Context(), res.RunID, "bob", "changed my mind"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cres, err := cs.Settle(ctx, res.Subruns[0].RunID)
	for err == nil && cres.Status != weft.StatusCancelled && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		cres, err = cs.Settle(ctx, res.Subruns[0].RunID)
	}
	if cres == nil || cres.Status != weft.StatusCancelled {
		t.Fatalf("child = %+v, %v; want cancelled", cres, err)
	}
}

// TestAgentToolLimits: a sub-run that would nest deeper than the depth
// limit is refused with a *SubrunLimitError the model sees as a user
// error (the fan-out limit: TestRenamedAgentToolFanOut).
func TestAgentToolLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		rt := newRuntime(t)
		leaf := newAgentNamed(t, rt, "leaf", weft.AgentConfig{Model: llm.AlwaysText("leaf done")})
		mid := newAgentNamed(t, rt, "mid", weft.AgentConfig{Model: delegating("leaf", "x"), Tools: []toolsets.Tool{agentTool(t, leaf, weft.WithMaxDepth(1))}})
		top := newAgentNamed(t, rt, "top", weft.AgentConfig{Model: delegating("mid", "y"), Tools: []toolsets.Tool{agentTool(t, mid)}})
		_, res := runSettled(t, top, "go")
		if res.Status != weft.StatusCompleted || !strings.Contains(res.Output, "exceed the depth limit of 1") {
			t.Fatalf("parent %s %q", res.Status, res.Output)
		}
		var le *weft.SubrunLimitError
		if !errors.As(&weft.SubrunLimitError{Limit: "depth"}, &le) || toolsets.KindOf(le) != toolsets.KindUserError {
			t.Error("a SubrunLimitError is not a user error")
		}
	})
}

// returnKinds maps the call ids of a session's tool.returned events to
// their kinds (the last return of each).
func returnKinds(t *testing.T, rt *weft.Runtime, session string) map[string]toolsets.Kind {
	t.Helper()
	out := map[string]toolsets.Kind{}
	for _, ev := range streamEvents(t, rt, session) {
		if ev.Type == events.TypeToolReturned {
			out[ev.ToolCallID] = returnOf(t, ev).Kind
		}
	}
	return out
}

// TestAgentToolUsageCountsAgainstParent: a child's usage is added to its
// parent's, and counts against the parent's limits.
func TestAgentToolUsageCountsAgainstParent(t *testing.T) {
	for _, limited := range []bool{false, true} {
		t.Run(map[bool]string{false: "counted", true: "limited"}[limited], func(t *testing.T) {
			rt := newRuntime(t)
			helper := newAgentNamed(t, rt, "helper", weft.AgentConfig{Model: llm.AlwaysText("ok")})
			cfg := weft.AgentConfig{Model: delegating("helper", "a"), Tools: []toolsets.Tool{agentTool(t, helper)}}
			if limited {
				cfg.Limits.Requests = weft.AtMost(2)
			}
			boss := newAgentNamed(t, rt, "boss", cfg)
			_, res := runSettled(t, boss, "go")
			var re *weft.RunError
			switch {
			case !limited && (res.Status != weft.StatusCompleted || res.Usage.Requests != 3):
				t.Fatalf("parent %s with %d requests; want completed with 3 (2 own, 1 child's)", res.Status, res.Usage.Requests)
			case limited && (res.Status != weft.StatusFailed || !errors.As(res.Err, &re) || re.Kind != "usage_limit_exceeded"):
				t.Fatalf("parent %s (%v); want usage_limit_exceeded", res.Status, res.Err)
			}
		})
	}
}

// TestAgentToolParentWithItsOwnApproval: a parent that waits both for its
// own approval and for a sub-run is resumed by the person's decision once
// the sub-run has ended: the resume carries the sub-run's end.
func TestAgentToolParentWithItsOwnApproval(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	helper := newAgentNamed(t, rt, "helper", weft.AgentConfig{Model: llm.AlwaysText("helped")})
	model := llm.NewScripted(llm.ScriptToolCalls(call("h1", "helper", `{"prompt":"help"}`), call("d1", "deploy", `{}`)), llm.ScriptText("all done"))
	boss := newAgentNamed(t, rt, "boss", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{agentTool(t, helper), deployTool(t, &runs)}})
	sess, res := runSettled(t, boss, "go")
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("parent %s, pending %+v", res.Status, res.Pending)
	}
	// The helper has ended by now: its end rides with the decision.
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err = sess.Resume(t.Context(), weft.Approve("d1", "alice", nil))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the sub-run may still be going
	}
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "all done" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if got := string(lastUserMessage(t, model, 1).ToolReturns()[0].Content); got != `"helped"` {
		t.Errorf("the helper's return: %s", got)
	}
}

// TestForgedParentDoesNotSettle: a run started with metadata that names
// a waiting parent's call (weft.parent) is not that call's sub-run: its
// end settles nothing, and the parent waits for its real child.
func TestForgedParentDoesNotSettle(t *testing.T) {
	rt := newRuntime(t)
	lead, deployer, _ := leadAndDeployer(t, rt)
	forger := newAgentNamed(t, rt, "forger", weft.AgentConfig{Model: llm.AlwaysText("fake output")})
	sess, res := runSettled(t, lead, "ship it")
	if len(res.Subruns) != 1 {
		t.Fatalf("parent %+v", res)
	}
	md := map[string]any{"weft.parent": map[string]any{"session_id": sess.ID(), "run_id": res.RunID, "tool_call_id": "c1", "depth": 1}}
	forged, err := forger.NewSession().Run(t.Context(), "pretend", weft.WithMetadata(md))
	if err != nil || forged.Status != weft.StatusCompleted {
		t.Fatalf("forged run %+v, %v", forged, err)
	}
	time.Sleep(100 * time.Millisecond)
	st, err := sess.Status(t.Context())
	if err != nil || st.Runs[len(st.Runs)-1].Status != weft.StatusWaiting {
		t.Fatalf("the parent did not keep waiting: %+v, %v", st, err)
	}
	if _, err := deployer.Session(res.Subruns[0].SessionID).Decide(t.Context(), weft.Approve(res.Subruns[0].ID, "alice", nil)); err != nil {
		t.Fatal(err)
	}
	if res = settle(t, sess, res.RunID); res.Output != `plan: "deployed prod"` {
		t.Errorf("parent output %q, want the real child's", res.Output)
	}
}
