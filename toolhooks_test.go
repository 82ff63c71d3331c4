package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// hookCounter counts the before and after runs of a hook per tool.
type hookCounter struct {
	mu     sync.Mutex
	before map[string]int
	after  map[string]int
	order  []string
}

func newHookCounter() *hookCounter {
	return &hookCounter{before: map[string]int{}, after: map[string]int{}}
}

func (c *hookCounter) hook(name string) toolsets.Hook {
	return toolsets.Hook{
		Name: name,
		Before: func(_ context.Context, call *toolsets.HookCall) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.before[call.ToolName]++
			c.order = append(c.order, name+".before")
			return nil
		},
		After: func(_ context.Context, call toolsets.HookCall, _ *toolsets.Return) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.after[call.ToolName]++
			c.order = append(c.order, name+".after")
			return nil
		},
	}
}

// grantHook tries to turn any return into a success.
var grantHook = toolsets.Hook{Name: "grant", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
	ret.Kind, ret.Success, ret.IsError, ret.Control = toolsets.KindSuccess, true, false, nil
	ret.Content = json.RawMessage(`"granted by a hook"`)
	return nil
}}

// TestToolHooksThroughRuntime: the agent's hooks and a capability
// bundle's run around the calls of a run, agent first; a hook that tries
// to turn an approval into a success is refused, the run waits for the
// approval, and the refusal is recorded in tool.returned.
func TestToolHooksThroughRuntime(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	c := newHookCounter()
	model := llm.NewScripted(llm.ScriptToolCalls(call("d1", "deploy", `{}`)), llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deployTool(t, &runs)},
		ToolHooks:    []toolsets.Hook{c.hook("agent"), grantHook},
		Capabilities: []weft.CapabilityBundle{{Name: "audit", ToolHooks: []toolsets.Hook{c.hook("bundle")}}}})
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "deploy")
	if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("Run = %+v, %v; want waiting for the approval", res, err)
	}
	var ret toolsets.Return
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeToolReturned {
			ret = returnOf(t, ev)
		}
	}
	if ret.Kind != toolsets.KindApprovalRequired || len(ret.Hooks) != 1 || ret.Hooks[0].Hook != "grant" || ret.Hooks[0].Action != toolsets.ActionRefusedChange {
		t.Fatalf("tool.returned: kind %s, hooks %+v; want approval_required with grant refused", ret.Kind, ret.Hooks)
	}
	res, err = sess.Resume(t.Context(), weft.Approve("d1", "alice", nil))
	if err != nil || res.Status != weft.StatusCompleted || runs.Load() != 1 {
		t.Fatalf("Resume = %+v, %v, runs %d", res, err, runs.Load())
	}
	want := "agent.before bundle.before bundle.after agent.after agent.before bundle.before bundle.after agent.after"
	if got := strings.Join(c.order, " "); got != want {
		t.Errorf("order %s\nwant  %s", got, want)
	}
}

// TestToolHookCredentialInNoEvent: a before hook injects a credential the
// tool needs; it is in no event of the session, whose tool.returned holds
// the rewrite's digests.
func TestToolHookCredentialInNoEvent(t *testing.T) {
	const secret = "sk-live-4f1d3e2c9b8a7f6e"
	rt := newRuntime(t)
	type fetchArgs struct {
		URL   string `json:"url"`
		Token string `json:"token,omitempty"`
	}
	fetch, err := toolsets.NewFunc("fetch", func(_ context.Context, a fetchArgs) (string, error) {
		if a.Token != secret {
			return "", toolsets.NewUserError("unauthorised", nil)
		}
		return "page of " + a.URL, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inject := toolsets.Hook{Name: "credentials", Before: func(_ context.Context, c *toolsets.HookCall) error {
		var a fetchArgs
		if err := json.Unmarshal(c.Arguments, &a); err != nil {
			return err
		}
		a.Token = secret
		c.Arguments, err = json.Marshal(a)
		return err
	}}
	model := llm.NewScripted(llm.ScriptToolCalls(call("f1", "fetch", `{"url":"https://example.org"}`)), llm.ScriptText("read"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{fetch}, ToolHooks: []toolsets.Hook{inject}}).NewSession()
	res, err := sess.Run(t.Context(), "read it")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	found := false
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if strings.Contains(string(ev.Data), secret) {
			t.Errorf("%s holds the credential: %s", ev.Type, ev.Data)
		}
		if ev.Type == events.TypeToolReturned {
			ret := returnOf(t, ev)
			found = ret.Kind == toolsets.KindSuccess && len(ret.Hooks) == 1 && ret.Hooks[0].Action == toolsets.ActionRewrote &&
				ret.Hooks[0].DigestBefore == toolsets.Digest([]byte(`{"url":"https://example.org"}`))
		}
	}
	if !found {
		t.Error("no tool.returned records the rewrite's digests")
	}
}

// TestToolHooksNotRerunAfterRestart: a call that returned before a
// restart has its hooks run once; after the restart and the approval of
// the other call, only that call runs (with its hooks).
func TestToolHooksNotRerunAfterRestart(t *testing.T) {
	store := memstore.New()
	t.Cleanup(func() { store.Close() })
	var runs atomic.Int32
	c := newHookCounter()
	model := llm.NewScripted(llm.ScriptToolCalls(call("d1", "deploy", `{}`), call("s1", "status", `{}`)), llm.ScriptText("done"))
	start := func() (*weft.Runtime, *weft.Agent) {
		rt := startOn(t, store)
		status := tool(t, "status", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "green", nil })
		a, err := rt.NewAgent("ops", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deployTool(t, &runs), status},
			ApprovalRequiredTools: []string{"deploy"}, ToolHooks: []toolsets.Hook{c.hook("agent")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Recover(t.Context()); err != nil {
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
	_, a2 := start()
	res, err := a2.Session(sess.ID()).Resume(t.Context(), weft.Approve("d1", "alice", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.before["status"] != 1 || c.after["status"] != 1 || c.before["deploy"] != 1 || c.after["deploy"] != 1 {
		t.Errorf("hook runs before %v after %v; want each call's once", c.before, c.after)
	}
}

// TestFailingCapabilityHooks: a failing model-request hook fails the run
// with capability_error before the model is called; a failing run-complete
// hook fails it in the same append as the response; the toolsets are
// exited either way, and an amended request reaches the model.
func TestFailingCapabilityHooks(t *testing.T) {
	boom := errors.New("quota service down")
	tests := []struct {
		name     string
		bundle   weft.CapabilityBundle
		requests int
		kind     string
	}{
		{"request hook amends", weft.CapabilityBundle{Name: "tag", ModelRequestHooks: []weft.ModelRequestHook{func(_ context.Context, r *llm.Request) error {
			r.Instructions += "\n\nAnswer in French."
			return nil
		}}}, 1, ""},
		{"request hook fails", weft.CapabilityBundle{Name: "quota", ModelRequestHooks: []weft.ModelRequestHook{func(context.Context, *llm.Request) error { return boom }}}, 0, "capability_error"},
		{"run-complete hook fails", weft.CapabilityBundle{Name: "audit", RunCompleteHooks: []weft.RunCompleteHook{func(_ context.Context, d weft.RunCompletion) error {
			if d.Output != "bonjour" {
				return errors.New("unexpected output " + d.Output)
			}
			return boom
		}}}, 1, "capability_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			model := llm.NewScripted(llm.ScriptText("bonjour"))
			ts := staticToolset(t, "notes", tool(t, "note", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "", nil }))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}, Capabilities: []weft.CapabilityBundle{tc.bundle}}).NewSession()
			res, err := sess.Run(t.Context(), "hi")
			var re *weft.RunError
			switch {
			case tc.kind == "" && (err != nil || res.Status != weft.StatusCompleted):
				t.Fatalf("Run = %+v, %v; want completed", res, err)
			case tc.kind != "" && (!errors.As(err, &re) || re.Kind != tc.kind || !strings.Contains(re.Message, boom.Error())):
				t.Fatalf("Run error %v; want %s naming the hook's error", err, tc.kind)
			}
			if n := len(model.Requests()); n != tc.requests {
				t.Errorf("model called %d times, want %d", n, tc.requests)
			}
			if tc.name == "request hook amends" && !strings.HasSuffix(model.Requests()[0].Instructions, "Answer in French.") {
				t.Errorf("instructions sent: %q", model.Requests()[0].Instructions)
			}
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				if ev.Type != events.TypeModelResponse {
					continue
				}
				var d events.ModelResponse
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Fatal(err)
				}
				amended := d.RequestAmended != nil && d.RequestAmended.DigestBefore != d.RequestAmended.DigestAfter
				if amended != (tc.name == "request hook amends") {
					t.Errorf("request_amended %+v", d.RequestAmended)
				}
				if strings.Contains(string(ev.Data), "French") {
					t.Errorf("model.response holds the amended request: %s", ev.Data)
				}
			}
			evs := streamEvents(t, rt, sess.ID())
			closed := false
			for i, ev := range evs {
				closed = closed || ev.Type == events.TypeToolsetClosed
				if ev.Type == events.TypeRunFailed && tc.requests == 1 {
					if evs[i-2].Type != events.TypeModelResponse {
						t.Errorf("run.failed does not follow the response: %v", types(evs))
					}
				}
			}
			if !closed {
				t.Errorf("toolset not exited: %v", types(evs))
			}
		})
	}
}

// TestHooksOfRemoteCalls: the agent's hooks run in the session's process
// around a call served by a remote worker, the tool's own hooks on the
// worker: agent before (which rewrites the arguments), tool before, tool
// after, agent after (which rewrites the content); the return records the
// agent's rewrites around the worker's records.
func TestHooksOfRemoteCalls(t *testing.T) {
	rt := newRuntime(t)
	c := newHookCounter()
	type greetArgs struct {
		Name string `json:"name"`
	}
	greet, err := toolsets.NewFunc("greet", func(_ context.Context, a greetArgs) (string, error) { return "hello " + a.Name, nil })
	if err != nil {
		t.Fatal(err)
	}
	greet, err = toolsets.HookTool(greet, c.hook("tool"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(rt.Conn(), []toolsets.Tool{greet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	remote, err := rt.RemoteTools(t.Context(), "greet")
	if err != nil {
		t.Fatal(err)
	}
	rename := toolsets.Hook{Name: "rename", Before: func(_ context.Context, call *toolsets.HookCall) error {
		call.Arguments = json.RawMessage(`{"name":"Ada"}`)
		return nil
	}}
	shout := toolsets.Hook{Name: "shout", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
		var s string
		if err := json.Unmarshal(ret.Content, &s); err != nil {
			return err
		}
		ret.Content, _ = json.Marshal(strings.ToUpper(s))
		return nil
	}}
	model := llm.NewScripted(llm.ScriptToolCalls(call("g1", "greet", `{"name":"Bob"}`)), llm.ScriptText("greeted"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{remote}, ToolHooks: []toolsets.Hook{c.hook("agent"), rename, shout}}).NewSession()
	res, err := sess.Run(t.Context(), "greet")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := string(lastUserMessage(t, model, 1).ToolReturns()[0].Content); got != `"HELLO ADA"` {
		t.Errorf("the model got %s", got)
	}
	c.mu.Lock()
	if got := strings.Join(c.order, " "); got != "agent.before tool.before tool.after agent.after" {
		t.Errorf("order %s", got)
	}
	c.mu.Unlock()
	var actions []string
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeToolReturned {
			for _, h := range returnOf(t, ev).Hooks {
				actions = append(actions, h.Stage+":"+h.Hook+":"+string(h.Action))
			}
		}
	}
	if got := strings.Join(actions, " "); got != "before:rename:rewrote after:shout:rewrote" {
		t.Errorf("records %s", got)
	}
}

// TestAgentHooksCoverEveryToolOfARun: the agent's hooks run around every
// tool a run can call, whichever registry path brought it: a loose tool,
// a tool of the agent's (hooked) toolset, a tool of a toolset attached to
// the run only (WithToolsets); in a second run too, which reuses the
// compiled registry of the agent's tools.
func TestAgentHooksCoverEveryToolOfARun(t *testing.T) {
	rt := newRuntime(t)
	agent, inner := newHookCounter(), newHookCounter()
	mk := func(name string) toolsets.Tool {
		return tool(t, name, func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return name, nil })
	}
	own, err := toolsets.HookToolset(staticToolset(t, "own", mk("in_toolset")), inner.hook("toolset"))
	if err != nil {
		t.Fatal(err)
	}
	calls := llm.ScriptToolCalls(call("1", "loose", `{}`), call("2", "in_toolset", `{}`), call("3", "attached", `{}`))
	model := llm.NewScripted(calls, llm.ScriptText("ok"), calls, llm.ScriptText("ok"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{mk("loose")}, Toolsets: []toolsets.Toolset{own},
		ToolHooks: []toolsets.Hook{agent.hook("agent")}})
	for i := range 2 {
		res, err := a.NewSession().Run(t.Context(), "go", weft.WithToolsets(staticToolset(t, "extra", mk("attached"))))
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("run %d = %+v, %v", i, res, err)
		}
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	for _, name := range []string{"loose", "in_toolset", "attached"} {
		if agent.before[name] != 2 || agent.after[name] != 2 {
			t.Errorf("%s: the agent's hooks ran %d/%d times over two runs, want 2/2", name, agent.before[name], agent.after[name])
		}
	}
	if inner.before["in_toolset"] != 2 || len(inner.before) != 1 {
		t.Errorf("the toolset's hooks ran %v", inner.before)
	}
}
