package weft

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestIsAgentToolThroughRenames: a name resolves to an agent tool by the
// tool it names, under the wrappers that rename it or drop its mark; a
// plain tool, an unknown name, and (without a registry) any name are
// decided as the doc comment says.
func TestIsAgentToolThroughRenames(t *testing.T) {
	type noArgs struct{}
	mark := toolsets.WithMetadata(map[string]any{metaAgentTool: "helper"})
	at, err := toolsets.NewContextFunc("helper", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return nil, nil }, mark)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := toolsets.NewContextFunc("lookup", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	unmarked, err := toolsets.NewContextFunc("worker", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	ts, err := toolsets.New("agents", []toolsets.Tool{at, plain, &agentTool{Tool: unmarked}})
	if err != nil {
		t.Fatal(err)
	}
	unmark := func(_ context.Context, _ *toolsets.ToolsetContext, defs []toolsets.Definition) ([]toolsets.Definition, error) {
		for i := range defs {
			if defs[i].Name == "worker" {
				defs[i].Metadata = nil
				defs[i].Description = "does work"
			}
		}
		return defs, nil
	}
	wrapped, err := toolsets.Wrap(ts).Prepared(unmark).Renamed(map[string]string{"helper": "assistant", "worker": "aide"}).Prefixed("team").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), wrapped); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"team_assistant": true, "team_aide": true, "team_lookup": false, "helper": false, "nothing": false} {
		if got := isAgentTool(reg, name); got != want {
			t.Errorf("isAgentTool(%q) = %v; want %v", name, got, want)
		}
	}
	if !isAgentTool(nil, "team_lookup") {
		t.Error("without a registry a call is not taken for a sub-run")
	}
}

// TestFanOutPosition: calls count in model order, only those of agent
// tools; a call not in the batch comes last.
func TestFanOutPosition(t *testing.T) {
	batch := []actors.BatchCall{{ID: "c1", Tool: "a"}, {ID: "c2", Tool: "x"}, {ID: "c3", Tool: "b"}, {ID: "c4", Tool: "a"}}
	agent := func(tool string) bool { return tool != "x" }
	for call, want := range map[string]int{"c1": 1, "c2": 1, "c3": 2, "c4": 3, "c9": 4} {
		if got, found := fanOutPosition(batch, call, agent); got != want || found != (call != "c9") {
			t.Errorf("fanOutPosition(%s) = %d, %v; want %d, %v", call, got, found, want, call != "c9")
		}
	}
}

// TestMayHaveChild: the calls whose child may still run are those in
// flight, cancelled, or waiting for a sub-run, whatever their tools'
// names; finished calls and those waiting for a person are not.
func TestMayHaveChild(t *testing.T) {
	sub := map[string]any{MetaSubrun: map[string]any{"session_id": "s", "run_id": "r"}}
	r := &actors.RunState{Batch: []*actors.CallState{
		{ID: "inflight", Tool: "team_helper"},
		{ID: "cancelled", Tool: "assistant", Return: &toolsets.Return{Kind: toolsets.KindCancelled}},
		{ID: "waits-child", Tool: "x", Pending: actors.PendingDeferred, Return: &toolsets.Return{Kind: toolsets.KindCallDeferred, Control: &toolsets.Control{Metadata: sub}}},
		{ID: "waits-person", Tool: "y", Pending: actors.PendingDeferred, Return: &toolsets.Return{Kind: toolsets.KindCallDeferred, Control: &toolsets.Control{}}},
		{ID: "approval", Tool: "z", Pending: actors.PendingApproval, Return: &toolsets.Return{Kind: toolsets.KindApprovalRequired, Control: &toolsets.Control{}}},
		{ID: "done", Tool: "helper", Return: &toolsets.Return{Kind: toolsets.KindSuccess}},
	}}
	if got, want := mayHaveChild(r), []string{"inflight", "cancelled", "waits-child"}; !slices.Equal(got, want) {
		t.Errorf("mayHaveChild = %v; want %v", got, want)
	}
}

// TestRunBatchWhileCallsRun: while a call of a response runs, the tool
// host knows the response's calls in model order and its registry, so a
// fan-out count needs no read of the parent's session.
func TestRunBatchWhileCallsRun(t *testing.T) {
	rt, err := Start(t.Context(), Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	type noArgs struct{}
	var mu sync.Mutex
	var seen []actors.BatchCall
	var reg *toolsets.Registry
	probe, err := toolsets.NewContextFunc("probe", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		seen, _ = rt.host.RunBatch(tc.SessionID, tc.RunID)
		reg, _ = rt.host.RunRegistry(tc.SessionID, tc.RunID)
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := toolsets.NewContextFunc("other", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	model := llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
			return &llm.Response{Text: "done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "a", Name: "other", Arguments: []byte(`{}`)}, {ID: "b", Name: "probe", Arguments: []byte(`{}`)}}}, nil
	})
	a, err := rt.NewAgent("prober", AgentConfig{Model: model, Tools: []toolsets.Tool{other, probe}})
	if err != nil {
		t.Fatal(err)
	}
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res, err = sess.Settle(t.Context(), res.RunID); err != nil || res.Status != StatusCompleted {
		t.Fatalf("run %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []actors.BatchCall{{ID: "a", Tool: "other"}, {ID: "b", Tool: "probe"}}; !slices.Equal(seen, want) {
		t.Errorf("RunBatch = %v; want %v", seen, want)
	}
	if _, ok := reg.Lookup("probe"); !ok {
		t.Error("RunRegistry does not resolve the run's tools")
	}
}

// TestFanOutInSession: read from the parent's session, a program's calls
// (code mode) count among the calls of agent tools of the response, after
// those recorded before them; a call not recorded yet comes last; a run
// the session lacks refuses the count instead of placing the call first.
func TestFanOutInSession(t *testing.T) {
	st := actors.NewSessionState("s")
	st.Runs["r"] = &actors.RunState{ID: "r", Batch: []*actors.CallState{
		{ID: "c1", Tool: "helper"},
		{ID: "c2", Tool: "run_code"},
		{ID: "c2.1", Tool: "helper", Parent: "c2"},
		{ID: "c2.2", Tool: "lookup", Parent: "c2"},
		{ID: "c2.3", Tool: "helper", Parent: "c2"},
	}}
	agent := func(tool string) bool { return tool == "helper" }
	for call, want := range map[string]int{"c1": 1, "c2.1": 2, "c2.3": 3, "c2.4": 4} {
		if got, err := fanOutInSession(st, "r", call, agent); err != nil || got != want {
			t.Errorf("fanOutInSession(%s) = %d, %v; want %d", call, got, err, want)
		}
	}
	if n, err := fanOutInSession(st, "gone", "c1", agent); err == nil {
		t.Errorf("fanOutInSession of a run the session lacks = %d; want an error", n)
	}
}

// TestCancelSendsNoCommandToAbsentChild: a run cancelled with only a
// plain tool in flight, on a runtime with an agent tool, starts no session
// for the child its call would have had: nothing is cancelled there.
func TestCancelSendsNoCommandToAbsentChild(t *testing.T) {
	rt, err := Start(t.Context(), Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	type noArgs struct{}
	entered := make(chan struct{})
	slow, err := toolsets.NewContextFunc("slow", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	helper, err := rt.NewAgent("helper", AgentConfig{Model: llm.AlwaysText("ok")})
	if err != nil {
		t.Fatal(err)
	}
	at, err := AgentTool(helper)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "slow", Arguments: []byte(`{}`)}}}, nil
	})
	lead, err := rt.NewAgent("lead", AgentConfig{Model: model, Tools: []toolsets.Tool{at, slow}})
	if err != nil {
		t.Fatal(err)
	}
	sess := lead.NewSession()
	runID, err := sess.Start(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := sess.Cancel(t.Context(), runID, "bob", "stop"); err != nil {
		t.Fatal(err)
	}
	if res, err := sess.Settle(t.Context(), runID); err != nil || res.Status != StatusCancelled {
		t.Fatalf("run %+v, %v; want cancelled", res, err)
	}
	rt.subs().cancelChildren(t.Context(), sess.ID(), runID, "cancelled")
	child, _ := childIDs(sess.ID(), runID, "c1")
	if rt.host.Drives(child) {
		t.Error("cancelling the parent started a session for a child that never was")
	}
}
