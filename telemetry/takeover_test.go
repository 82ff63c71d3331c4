package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
)

// TestSpanTreeTakeover derives the spans of one run across a node change:
// node A's Telemetry sees the run's appends up to the middle of a tool
// call and stops (its process died: the run span and the tool span stay
// unended in it); node B's, which never saw the run start, sees the rest
// and reads the beginning from the log. The tree is one trace: B ends the
// run span A began (the same derived ids), with A's chat span under it.
func TestSpanTreeTakeover(t *testing.T) {
	store := memstore.New()
	started, err := telemetry.New(telemetry.Config{}) // records the trace in run.started
	if err != nil {
		t.Fatal(err)
	}
	rt, err := weft.Start(t.Context(), weft.Config{Store: store, Observer: started})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ok := func(context.Context, *toolsets.ToolContext, struct{}) (any, error) { return "ok", nil }
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "alpha", `{}`)), llm.ScriptText("done"))
	s := agent(t, rt, "carried", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{newTool(t, "alpha", ok)}}).NewSession()
	run(t, s, weft.StatusCompleted)
	evs, err := store.ReadStream(t.Context(), events.SessionStream(s.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	cut := -1
	for i, ev := range evs {
		if ev.Type == events.TypeToolStarted {
			cut = i + 1
		}
	}
	if cut < 0 {
		t.Fatal("no tool.started in the log")
	}

	exp := tracetest.NewInMemoryExporter()
	nodeA, err := telemetry.New(telemetry.Config{SpanExporters: []sdktrace.SpanExporter{exp}, Syncer: true})
	if err != nil {
		t.Fatal(err)
	}
	nodeB, err := telemetry.New(telemetry.Config{SpanExporters: []sdktrace.SpanExporter{exp}, Syncer: true, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs[:cut] {
		nodeA.Appended([]events.Event{ev}, 0)
	}
	for _, ev := range evs[cut:] {
		nodeB.Appended([]events.Event{ev}, 0)
	}
	spans := exp.GetSpans()
	checkGolden(t, "takeover", tree(spans))
	for _, sp := range spans {
		if sp.SpanContext.TraceID() != spans[0].SpanContext.TraceID() {
			t.Errorf("span %s is in trace %s, want one trace", sp.Name, sp.SpanContext.TraceID())
		}
	}
	// The trace is the one run.started recorded.
	var d events.RunStarted
	if err := json.Unmarshal(evs[0].Data, &d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Metadata), spans[0].SpanContext.TraceID().String()) {
		t.Errorf("run.started metadata %s does not hold the trace %s", d.Metadata, spans[0].SpanContext.TraceID())
	}
}

// TestTraceparentParentsTheRun starts a run with POST /v1/runs carrying a
// traceparent: the run span is the caller's child, in its trace.
func TestTraceparentParentsTheRun(t *testing.T) {
	rt, _, exp := setup(t, telemetry.Config{})
	a := agent(t, rt, "api", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptText("hi"))})
	api, err := httpapi.New(rt, httpapi.Config{Agents: []*weft.Agent{a}})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := httptest.NewRequest("POST", "/v1/runs", strings.NewReader(`{"agent":"api","prompt":"hello"}`))
	req.Header.Set("traceparent", caller)
	w := httptest.NewRecorder()
	telemetry.Middleware(api).ServeHTTP(w, req)
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs = %d %s", w.Code, w.Body)
	}
	var ref struct{ SessionID, RunID string }
	_ = json.Unmarshal(w.Body.Bytes(), &struct {
		S *string `json:"session_id"`
		R *string `json:"run_id"`
	}{&ref.SessionID, &ref.RunID})
	if _, err := a.Session(ref.SessionID).Wait(t.Context(), ref.RunID); err != nil {
		t.Fatal(err)
	}
	// Wait may read the run's end from the log before the appending
	// actor has shown it to the observer: wait for the run span.
	for deadline := time.Now().Add(5 * time.Second); !hasSpan(exp, "invoke_agent api") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	checkGolden(t, "traceparent", tree(exp.GetSpans()))
	for _, sp := range exp.GetSpans() {
		if sp.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("span %s is in trace %s, want the caller's", sp.Name, sp.SpanContext.TraceID())
		}
	}
}

// TestRecordContent: tool arguments and results are in the spans only
// with RecordContent.
func TestRecordContent(t *testing.T) {
	for _, on := range []bool{false, true} {
		rt, _, exp := setup(t, telemetry.Config{RecordContent: on})
		echo, err := toolsets.NewFunc("echo", func(context.Context, struct{ Q string }) (any, error) { return "secret-result", nil })
		if err != nil {
			t.Fatal(err)
		}
		model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "echo", `{"Q":"secret-args"}`)), llm.ScriptText("done"))
		run(t, agent(t, rt, "content", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{echo}}).NewSession(), weft.StatusCompleted)
		var found []string
		for _, sp := range exp.GetSpans() {
			for _, kv := range sp.Attributes {
				if strings.Contains(kv.Value.String(), "secret-") {
					found = append(found, string(kv.Key))
				}
			}
		}
		if want := map[bool]int{false: 0, true: 2}[on]; len(found) != want {
			t.Errorf("RecordContent %v: content in %v, want %d attributes", on, found, want)
		}
	}
}

func hasSpan(exp *tracetest.InMemoryExporter, name string) bool {
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			return true
		}
	}
	return false
}
