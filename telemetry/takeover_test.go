package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
)

// TestSpanTreeTakeover is a real takeover: two nodes on one NATS server
// with JetStream, each with its own Telemetry and exporter. Node A starts
// a run whose tool blocks, and dies (its connection drops: the lease is
// neither renewed nor released). Node B's lease watcher takes the session
// over when the lease expires, runs the call again and completes the run.
// B's spans continue A's trace: B ends the run span A began (the ids are
// derived from the log), A's chat span is its child, and the trace is the
// one run.started recorded.
func TestSpanTreeTakeover(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)

	started := make(chan struct{}, 1)
	block := newTool(t, "alpha", func(ctx context.Context, _ *toolsets.ToolContext, _ struct{}) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ok := newTool(t, "alpha", func(context.Context, *toolsets.ToolContext, struct{}) (any, error) { return "ok", nil })
	// A makes the first model request, B (carrying the run on after the
	// call) the second.
	a := clusterNode(t, srv.ClientURL(), "node-a", llm.NewScripted(llm.ScriptToolCalls(call("c1", "alpha", `{}`))), block)
	b := clusterNode(t, srv.ClientURL(), "node-b", llm.NewScripted(llm.ScriptText("done")), ok)

	taken := make(chan string, 1)
	watchCtx, stopWatch := context.WithCancel(t.Context())
	watched := make(chan error, 1)
	go func() { watched <- b.rt.WatchTakeovers(watchCtx, func(id string) { taken <- id }) }()
	defer func() {
		stopWatch()
		if err := <-watched; err != nil {
			t.Errorf("WatchTakeovers: %v", err)
		}
	}()

	s := a.agent.NewSession()
	runID, err := s.Start(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("A's tool never started")
	}
	// The call's start is in the log before A dies: B runs it again.
	waitForEvent(t, b.rt.Store(), s.ID(), events.TypeToolStarted)
	// A crash: the connection drops (the lease is neither renewed nor
	// released, nothing more is appended), then the runtime stops, which
	// can take a while with no connection: B does not wait for it.
	a.rt.Conn().Close()
	closed := make(chan struct{})
	go func() { defer close(closed); _ = a.rt.Close() }()
	defer func() { <-closed }()

	select {
	case id := <-taken:
		if id != s.ID() {
			t.Fatalf("B took over %s, want %s", id, s.ID())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("B did not take the session over")
	}
	res, err := b.agent.Session(s.ID()).Wait(t.Context(), runID)
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "done" {
		t.Fatalf("Wait on B = %+v, %v", res, err)
	}
	for deadline := time.Now().Add(5 * time.Second); !hasSpan(b.exp, "invoke_agent carried") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	fromA, fromB := a.exp.GetSpans(), quiet(b.exp)

	all := append(append(tracetest.SpanStubs{}, fromA...), fromB...)
	got := tree(all) + "\nnode-a exported: " + names(fromA) + "\nnode-b exported: " + names(fromB) + "\n"
	checkGolden(t, "takeover", got)

	// One trace, the one A recorded in run.started.
	evs, err := b.rt.Store().ReadStream(t.Context(), events.SessionStream(s.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	var d events.RunStarted
	if err := json.Unmarshal(evs[0].Data, &d); err != nil {
		t.Fatal(err)
	}
	for _, sp := range all {
		if id := sp.SpanContext.TraceID().String(); !strings.Contains(string(d.Metadata), id) {
			t.Errorf("span %s is in trace %s, not the one run.started recorded (%s)", sp.Name, id, d.Metadata)
		}
	}
	if n := takeovers(t, b.tel); n != "1" {
		t.Errorf("B counted %s takeovers, want 1", n)
	}
}

// node is one weft node of a cluster with its own telemetry.
type node struct {
	rt    *weft.Runtime
	agent *weft.Agent
	tel   *telemetry.Telemetry
	exp   *tracetest.InMemoryExporter
}

// clusterNode starts a node on the NATS server at url with a short lease
// TTL, its own Telemetry (reading the node's log) and exporter, and agent
// "carried" with model and tool.
func clusterNode(t *testing.T, url, id string, model llm.Model, tool toolsets.Tool) node {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(telemetry.Config{SpanExporters: []sdktrace.SpanExporter{exp}, Syncer: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: id, LeaseTTL: 400 * time.Millisecond, Observer: tel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	tel.SetStore(rt.Store())
	return node{rt: rt, agent: agent(t, rt, "carried", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{tool}}), tel: tel, exp: exp}
}

// waitForEvent waits until session's stream holds an event of type typ.
func waitForEvent(t *testing.T, store events.Store, session string, typ events.Type) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		evs, err := store.ReadStream(t.Context(), events.SessionStream(session), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == typ {
				return
			}
		}
	}
	t.Fatalf("no %s in session %s", typ, session)
}

// names lists the spans' names, sorted.
func names(spans tracetest.SpanStubs) string {
	var list []string
	for _, s := range spans {
		list = append(list, s.Name)
	}
	slices.Sort(list)
	return strings.Join(list, ", ")
}

// takeovers scrapes tel's lease takeover counter.
func takeovers(t *testing.T, tel *telemetry.Telemetry) string {
	t.Helper()
	w := httptest.NewRecorder()
	tel.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for l := range strings.Lines(w.Body.String()) {
		if strings.HasPrefix(l, "weft_lease_takeovers_total ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "weft_lease_takeovers_total "))
		}
	}
	return "none"
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
