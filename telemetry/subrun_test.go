package telemetry_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
)

// TestSpanTreeSubruns: a parent run calls an agent as a tool twice; each
// child run's invoke_agent span is a child of the parent's execute_tool
// span of the call that started it, in the parent's trace.
func TestSpanTreeSubruns(t *testing.T) {
	rt, _, exp := setup(t, telemetry.Config{})
	childModel := llm.NewScripted(llm.ScriptText("found"), llm.ScriptText("found"))
	researcher := agent(t, rt, "researcher", weft.AgentConfig{Model: childModel})
	ask, err := weft.AgentTool(researcher)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "researcher", `{"prompt":"a"}`), call("c2", "researcher", `{"prompt":"b"}`)), llm.ScriptText("done"))
	s := agent(t, rt, "lead", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{ask}}).NewSession()
	settle(t, s, run(t, s, weft.StatusWaiting).RunID)
	spans := waitSpans(t, exp, 9)
	checkGolden(t, "subruns", tree(spans))
	checkChildrenUnderCalls(t, spans, 2)
}

// waitSpans waits for n spans (they are emitted after the append a Wait
// may already have read).
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	t.Helper()
	for i := 0; ; i++ {
		spans := exp.GetSpans()
		if len(spans) >= n || i == 200 {
			return spans
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkChildrenUnderCalls checks that want child invoke_agent spans each
// have a distinct execute_tool span of the parent's trace as parent.
func checkChildrenUnderCalls(t *testing.T, spans tracetest.SpanStubs, want int) {
	t.Helper()
	byID := map[spanKey]tracetest.SpanStub{}
	for _, s := range spans {
		byID[keyOf(s.SpanContext)] = s
	}
	parents := map[spanKey]bool{}
	for _, s := range spans {
		if s.Name != "invoke_agent researcher" {
			continue
		}
		p, ok := byID[keyOf(s.Parent)]
		switch {
		case !ok:
			t.Errorf("child run span has no parent among the spans (parent %v)", s.Parent)
		case p.Name != "execute_tool researcher":
			t.Errorf("child run span's parent is %q, want the call's execute_tool span", p.Name)
		case p.SpanContext.TraceID() != s.SpanContext.TraceID():
			t.Errorf("child run span is in trace %s, its parent call in %s", s.SpanContext.TraceID(), p.SpanContext.TraceID())
		}
		parents[keyOf(s.Parent)] = true
	}
	if len(parents) != want {
		t.Errorf("%d child run spans under distinct calls, want %d", len(parents), want)
	}
}

// settle waits for a parent run whose sub-runs are working to complete.
func settle(t *testing.T, s *weft.Session, runID string) {
	t.Helper()
	res, err := s.Settle(t.Context(), runID)
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Settle = %+v, %v; want completed", res, err)
	}
}

// TestSpanTreeSubrunAfterRestart: the parent's agent-tool call needs an
// approval; the process stops while it waits; a new process (its own
// Telemetry, the same log) takes the approval, runs the call and the child:
// the child's span is a child of the call's execute_tool span in the
// parent's resumed segment, whose trace the new process derives from the
// log.
func TestSpanTreeSubrunAfterRestart(t *testing.T) {
	store := memstore.New()
	var spans tracetest.SpanStubs // of the processes stopped
	process := func(leadModel llm.Model) (*weft.Runtime, *weft.Agent, func()) {
		exp := tracetest.NewInMemoryExporter()
		tel, err := telemetry.New(telemetry.Config{SpanExporters: []sdktrace.SpanExporter{exp}, Syncer: true, Store: store, Backend: "memstore"})
		if err != nil {
			t.Fatal(err)
		}
		rt, err := weft.Start(t.Context(), weft.Config{Store: store, Observer: tel})
		if err != nil {
			t.Fatal(err)
		}
		researcher := agent(t, rt, "researcher", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptText("found"))})
		ask, err := weft.AgentTool(researcher)
		if err != nil {
			t.Fatal(err)
		}
		team, err := toolsets.New("team", []toolsets.Tool{ask})
		if err != nil {
			t.Fatal(err)
		}
		gated, err := toolsets.RequireApproval(team, []string{"researcher"}, "it costs")
		if err != nil {
			t.Fatal(err)
		}
		lead := agent(t, rt, "lead", weft.AgentConfig{Model: leadModel, Toolsets: []toolsets.Toolset{gated}})
		return rt, lead, func() {
			rt.Close()
			spans = append(spans, exp.GetSpans()...) // Shutdown empties exp
			_ = tel.Shutdown(context.Background())
		}
	}
	_, lead, stop := process(llm.NewScripted(llm.ScriptToolCalls(call("c1", "researcher", `{"prompt":"a"}`))))
	s := lead.NewSession()
	res := run(t, s, weft.StatusWaiting)
	stop()

	rt, lead, stop := process(llm.NewScripted(llm.ScriptText("done")))
	if _, err := rt.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	s = lead.Session(s.ID())
	if _, err := s.Resume(t.Context(), weft.Approve("c1", "ana", nil)); err != nil {
		t.Fatal(err)
	}
	settle(t, s, res.RunID)
	time.Sleep(50 * time.Millisecond) // spans land after the append Settle read
	stop()
	checkGolden(t, "subruns_restart", tree(spans))
	checkChildrenUnderCalls(t, spans, 1)
}

// TestSubrunTraceFromTheLog: a sub-run started with a context that carries
// no span (a recovered call, a worker without a tracer) is still put under
// its parent call's execute_tool span, derived from the log, also by a
// Telemetry that has seen nothing of the parent's session yet (it reads
// the log: a call run again after a restart); a parent run that this
// process does not follow gets no parent span.
func TestSubrunTraceFromTheLog(t *testing.T) {
	store := memstore.New()
	rt, tel, exp := setupOn(t, store, telemetry.Config{})
	other, err := telemetry.New(telemetry.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	var inFlight, fresh, unknown map[string]any
	spawn := newTool(t, "spawn", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		parent := func(run string) map[string]any {
			return map[string]any{actors.MetaParent: map[string]any{"session_id": tc.SessionID, "run_id": run, "tool_call_id": tc.CallID, "depth": 1}}
		}
		inFlight, fresh, unknown = parent(tc.RunID), parent(tc.RunID), parent("not-a-run")
		tel.RunStarting(context.Background(), inFlight)
		other.RunStarting(context.Background(), fresh)
		tel.RunStarting(context.Background(), unknown)
		return "ok", nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "spawn", `{}`)), llm.ScriptText("done"))
	run(t, agent(t, rt, "lead", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{spawn}}).NewSession(), weft.StatusCompleted)
	var want string
	for _, s := range waitSpans(t, exp, 4) {
		if s.Name == "execute_tool spawn" {
			want = "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"
		}
	}
	if got := inFlight[telemetry.MetadataKey]; !reflect.DeepEqual(got, map[string]any{"traceparent": want}) {
		t.Errorf("sub-run of a call: %s = %v, want traceparent %s", telemetry.MetadataKey, got, want)
	}
	if got := fresh[telemetry.MetadataKey]; !reflect.DeepEqual(got, map[string]any{"traceparent": want}) {
		t.Errorf("sub-run of a call, parent session read from the log: %s = %v, want traceparent %s", telemetry.MetadataKey, got, want)
	}
	if got, ok := unknown[telemetry.MetadataKey].(map[string]any); !ok || got["traceparent"] != nil || got["trace_id"] == nil {
		t.Errorf("sub-run of a run not followed: %s = %v, want a new trace id", telemetry.MetadataKey, unknown[telemetry.MetadataKey])
	}
}

// TestSubrunTraceReadOnce: the events a sub-run's start read from the log
// are applied once, though the appends that wrote them may reach the
// Telemetry after it: a parent in its second segment (after an approval)
// keeps that segment's trace.
func TestSubrunTraceReadOnce(t *testing.T) {
	store := memstore.New()
	rt, _, exp := setupOn(t, store, telemetry.Config{})
	other, err := telemetry.New(telemetry.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	var first, second map[string]any
	spawn := newTool(t, "spawn", func(ctx context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("spawn", nil)
		}
		parent := func() map[string]any {
			return map[string]any{actors.MetaParent: map[string]any{"session_id": tc.SessionID, "run_id": tc.RunID, "tool_call_id": tc.CallID, "depth": 1}}
		}
		first, second = parent(), parent()
		other.RunStarting(context.Background(), first) // reads the log
		evs, err := store.ReadStream(ctx, events.SessionStream(tc.SessionID), 0)
		if err != nil {
			return nil, err
		}
		other.Appended(evs[len(evs)-4:], 0) // appends it read, told late
		other.RunStarting(context.Background(), second)
		return "ok", nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "spawn", `{}`)), llm.ScriptText("done"))
	s := agent(t, rt, "lead", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{spawn}}).NewSession()
	run(t, s, weft.StatusWaiting)
	if res, err := s.Resume(t.Context(), weft.Approve("c1", "ana", nil)); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	spans := waitSpans(t, exp, 6)
	var seg1 trace.TraceID
	for _, sp := range spans {
		if sp.Name == "invoke_agent lead" && segmentOf(sp) == "1" {
			seg1 = sp.SpanContext.TraceID()
		}
	}
	var want string
	for _, sp := range spans {
		if sp.Name == "execute_tool spawn" && sp.SpanContext.TraceID() == seg1 {
			want = "00-" + sp.SpanContext.TraceID().String() + "-" + sp.SpanContext.SpanID().String() + "-01"
		}
	}
	if want == "" {
		t.Fatal("no execute_tool span in the second segment")
	}
	for name, md := range map[string]map[string]any{"first": first, "second": second} {
		if got := md[telemetry.MetadataKey]; !reflect.DeepEqual(got, map[string]any{"traceparent": want}) {
			t.Errorf("%s start: %s = %v, want traceparent %s (the call in the second segment)", name, telemetry.MetadataKey, got, want)
		}
	}
}
