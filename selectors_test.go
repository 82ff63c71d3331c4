package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// opsToolset is the selectors' fixture: toolset "ops" (id "ops-id") with
// ping (bundle "net", counted in runs) and status.
func opsToolset(t *testing.T, runs *atomic.Int32) toolsets.Toolset {
	t.Helper()
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		runs.Add(1)
		return "pong", nil
	}, toolsets.WithMetadata(map[string]any{"bundle": "net"}))
	ts, err := toolsets.New("ops", []toolsets.Tool{ping, okTool(t, "status", nil)}, toolsets.WithID("ops-id"))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// requestMeta returns the metadata of tool name in the model's first
// request: what a host or adapter sees of it.
func requestMeta(t *testing.T, m *llm.Scripted, name string) map[string]any {
	t.Helper()
	reqs := m.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	for _, d := range reqs[0].Tools {
		if d.Name == name {
			return d.Metadata
		}
	}
	t.Fatalf("the model was not offered %s", name)
	return nil
}

// TestGatedToolWaitsThroughRuntime: every selector kind, in the agent
// policy and in both wrappers, holds ping until a person decides; the
// model-facing definition says so; a typo is refused by NewAgent.
func TestGatedToolWaitsThroughRuntime(t *testing.T) {
	gates := []struct {
		name     string
		build    func(t *testing.T, runs *atomic.Int32, entries []string) weft.AgentConfig
		flag     string
		deferred bool
	}{
		{"agent policy", func(t *testing.T, runs *atomic.Int32, entries []string) weft.AgentConfig {
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{opsToolset(t, runs)}, ApprovalRequiredTools: entries}
		}, toolsets.MetaApprovalRequired, false},
		{"approval wrapper", func(t *testing.T, runs *atomic.Int32, entries []string) weft.AgentConfig {
			ts, err := toolsets.RequireApproval(opsToolset(t, runs), entries, "review")
			if err != nil {
				t.Fatal(err)
			}
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{ts}}
		}, toolsets.MetaApprovalRequired, false},
		{"deferral wrapper", func(t *testing.T, runs *atomic.Int32, entries []string) weft.AgentConfig {
			ts, err := toolsets.Defer(opsToolset(t, runs), entries, "a worker answers")
			if err != nil {
				t.Fatal(err)
			}
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{ts}}
		}, toolsets.MetaDeferredCall, true},
	}
	entries := []struct {
		name    string
		entries []string
		typo    bool
	}{
		{name: "tool name", entries: []string{"ping"}},
		{name: "toolset name", entries: []string{"ops"}},
		{name: "toolset id", entries: []string{"ops-id"}},
		{name: "bundle", entries: []string{"net"}},
		{name: "star", entries: []string{"*"}},
		{name: "typo", entries: []string{"nett"}, typo: true},
	}
	for _, g := range gates {
		for _, e := range entries {
			t.Run(g.name+"/"+e.name, func(t *testing.T) {
				rt := newRuntime(t)
				var runs atomic.Int32
				cfg := g.build(t, &runs, e.entries)
				model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("done"))
				cfg.Model = model
				a, err := rt.NewAgent(t.Name(), cfg)
				if e.typo {
					var se *toolsets.SelectorError
					if !errors.As(err, &se) || !errors.Is(err, toolsets.ErrUnmatchedSelector) || !strings.Contains(err.Error(), `"nett"`) || !strings.Contains(err.Error(), "ping") {
						t.Fatalf("NewAgent err = %v, want a *SelectorError naming the entry and the tools", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				sess := a.NewSession()
				res, err := sess.Run(t.Context(), "go")
				if err != nil {
					t.Fatal(err)
				}
				pending := res.Pending.Approvals
				if g.deferred {
					pending = res.Pending.Deferred
				}
				if res.Status != weft.StatusWaiting || len(pending) != 1 || pending[0].ID != "p" {
					t.Fatalf("Run = %+v, want waiting on p", res)
				}
				if runs.Load() != 0 {
					t.Fatal("ping ran before a person decided")
				}
				if meta := requestMeta(t, model, "ping"); meta[g.flag] != true {
					t.Errorf("ping's model-facing metadata = %v, want %s", meta, g.flag)
				}
				decision := weft.Approve("p", "ui", nil)
				if g.deferred {
					decision = weft.Complete("p", "worker", "pong from the worker")
				}
				res, err = sess.Resume(t.Context(), decision)
				if err != nil || res.Status != weft.StatusCompleted {
					t.Fatalf("Resume = %+v, %v", res, err)
				}
				want := int32(1)
				if g.deferred {
					want = 0 // the worker's result stands in for the call
				}
				if runs.Load() != want {
					t.Errorf("ping ran %d times after the decision, want %d", runs.Load(), want)
				}
			})
		}
	}
}

// dynamicOps is a dynamic toolset offering ping, which can only be listed
// by preparing it.
func dynamicOps(t *testing.T, runs *atomic.Int32) toolsets.Toolset {
	t.Helper()
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		runs.Add(1)
		return "pong", nil
	})
	dyn, err := toolsets.NewDynamic("ops", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
		return []toolsets.Tool{ping}, nil
	}}, toolsets.WithID("ops-id"))
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// TestPolicyTypoOnDynamicToolset: a toolset that cannot be listed at
// NewAgent is matched when it is prepared; an entry that matches nothing
// then fails the run (policy_error, recorded) before the model is asked,
// and the tool never runs.
func TestPolicyTypoOnDynamicToolset(t *testing.T) {
	tests := []struct {
		name        string
		cfg         func(t *testing.T, runs *atomic.Int32) weft.AgentConfig
		toolsetFail bool // a toolset.failed event names the wrapper's toolset
	}{
		{"agent policy", func(t *testing.T, runs *atomic.Int32) weft.AgentConfig {
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{dynamicOps(t, runs)}, ApprovalRequiredTools: []string{"pnig"}}
		}, false},
		{"approval wrapper", func(t *testing.T, runs *atomic.Int32) weft.AgentConfig {
			ts, err := toolsets.RequireApproval(dynamicOps(t, runs), []string{"pnig"}, "")
			if err != nil {
				t.Fatal(err)
			}
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{ts}}
		}, true},
		{"deferral wrapper", func(t *testing.T, runs *atomic.Int32) weft.AgentConfig {
			ts, err := toolsets.Defer(dynamicOps(t, runs), []string{"pnig"}, "")
			if err != nil {
				t.Fatal(err)
			}
			return weft.AgentConfig{Toolsets: []toolsets.Toolset{ts}}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var runs atomic.Int32
			cfg := tt.cfg(t, &runs)
			model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("done"))
			cfg.Model = model
			sess := newAgent(t, rt, cfg).NewSession()
			res, err := sess.Run(t.Context(), "go")
			var re *weft.RunError
			if !errors.As(err, &re) || re.Kind != actors.FailPolicy || !strings.Contains(re.Message, `"pnig"`) || !strings.Contains(re.Message, "ping") {
				t.Fatalf("Run = %+v, %v; want a policy_error naming the entry and the tools", res, err)
			}
			if runs.Load() != 0 || len(model.Requests()) != 0 {
				t.Errorf("ping ran %d times, the model got %d requests; want none", runs.Load(), len(model.Requests()))
			}
			var failed, toolsetFailed bool
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				switch ev.Type {
				case events.TypeRunFailed:
					var d events.RunFailed
					_ = json.Unmarshal(ev.Data, &d)
					failed = d.Error.Kind == actors.FailPolicy
				case events.TypeToolsetFailed:
					toolsetFailed = true
				}
			}
			if !failed || toolsetFailed != tt.toolsetFail {
				t.Errorf("run.failed (policy_error) %v, toolset.failed %v; want true, %v", failed, toolsetFailed, tt.toolsetFail)
			}
		})
	}
}

// TestPolicyOnDynamicToolset: the agent policy gates a tool that only a
// dynamic toolset offers, once it is prepared.
func TestPolicyOnDynamicToolset(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("done"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{dynamicOps(t, &runs)}, ApprovalRequiredTools: []string{"ping"}}).NewSession()
	res, err := sess.Run(t.Context(), "go")
	if err != nil || res.Status != weft.StatusWaiting || runs.Load() != 0 {
		t.Fatalf("Run = %+v, %v, runs %d; want waiting, not run", res, err, runs.Load())
	}
	if meta := requestMeta(t, model, "ping"); meta[toolsets.MetaApprovalRequired] != true || !strings.Contains(meta[toolsets.MetaApprovalReason].(string), `"ping"`) {
		t.Errorf("ping's metadata = %v, want the policy's mark and reason", meta)
	}
	if res, err := sess.Resume(t.Context(), weft.Approve("p", "ui", nil)); err != nil || res.Status != weft.StatusCompleted || runs.Load() != 1 {
		t.Fatalf("Resume = %+v, %v, runs %d", res, err, runs.Load())
	}
}
