package projections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// update re-records the golden histories (by running the runtime) and the
// golden projection outputs: go test ./projections -update
var update = flag.Bool("update", false, "re-record golden histories and projection outputs in testdata")

// history is a golden recorded history: a scenario run on the runtime whose
// events are kept in testdata/NAME.events.jsonl.
type history struct {
	name   string
	record func(t *testing.T, rt *weft.Runtime)
}

// histories are the golden histories every test replays.
var histories = []history{
	{name: "parallel", record: recordParallel},
	{name: "approved", record: recordApproved},
	{name: "denied", record: recordDenied},
	{name: "refused", record: recordRefused},
}

type cityArgs struct {
	City string `json:"city"`
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// mustTool panics on a tool definition error (the tools here are fixed).
func mustTool(tl toolsets.Tool, err error) toolsets.Tool {
	if err != nil {
		panic(err)
	}
	return tl
}

func newAgent(t *testing.T, rt *weft.Runtime, name string, cfg weft.AgentConfig) *weft.Agent {
	t.Helper()
	a, err := rt.NewAgent(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// weatherToolset is a toolset (with an id) of two tools the model calls in
// parallel.
func weatherToolset(t *testing.T) toolsets.Toolset {
	t.Helper()
	weather := mustTool(toolsets.NewContextFunc("weather", func(_ context.Context, _ *toolsets.ToolContext, a cityArgs) (map[string]any, error) {
		return map[string]any{"city": a.City, "sky": "clear", "celsius": 21}, nil
	}))
	clock := mustTool(toolsets.NewContextFunc("local_time", func(_ context.Context, _ *toolsets.ToolContext, a cityArgs) (string, error) {
		return "12:00 in " + a.City, nil
	}))
	ts, err := toolsets.New("weather", []toolsets.Tool{weather, clock}, toolsets.WithID("weather-v1"))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// recordParallel: one run, two parallel tool calls of a toolset, then text.
func recordParallel(t *testing.T, rt *weft.Runtime) {
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("w1", "weather", `{"city":"Lyon"}`), call("t1", "local_time", `{"city":"Lyon"}`)),
		llm.ScriptText("Clear skies in Lyon, 21°C, and it is noon."),
	)
	a := newAgent(t, rt, "forecaster", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{weatherToolset(t)}})
	res, err := a.Run(t.Context(), "What is the weather in Lyon?")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
}

// deployTools are a tool that needs approval and one whose result is
// deferred to an outside system.
func deployTools(t *testing.T) []toolsets.Tool {
	t.Helper()
	deploy := mustTool(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, a struct {
		Env string `json:"env"`
	}) (string, error) {
		if tc.Approval == nil {
			return "", toolsets.ApprovalRequired("deploy to "+a.Env, map[string]any{"risk": "high"})
		}
		return "deployed to " + a.Env, nil
	}))
	ticket := mustTool(toolsets.NewContextFunc("open_ticket", func(_ context.Context, _ *toolsets.ToolContext, a struct {
		Title string `json:"title"`
	}) (string, error) {
		return "", toolsets.CallDeferred("a human files the ticket", map[string]any{"queue": "ops"})
	}))
	return []toolsets.Tool{deploy, ticket}
}

// recordApproved: a run that waits for an approval and a deferred call,
// then is approved and completed.
func recordApproved(t *testing.T, rt *weft.Runtime) {
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("d1", "deploy", `{"env":"prod"}`), call("k1", "open_ticket", `{"title":"deploy prod"}`)),
		llm.ScriptText("Deployed; ticket OPS-7 filed."),
	)
	sess := newAgent(t, rt, "deployer", weft.AgentConfig{Model: model, Tools: deployTools(t)}).NewSession()
	res, err := sess.Run(t.Context(), "Deploy to prod and file a ticket.")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("run = %+v, %v", res, err)
	}
	res, err = sess.Resume(t.Context(), weft.Approve("d1", "alice", nil), weft.Complete("k1", "bob", map[string]string{"ticket": "OPS-7"}))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("resume = %+v, %v", res, err)
	}
}

// recordDenied: a session of two runs: the first completes without tools,
// the second waits for an approval that is denied.
func recordDenied(t *testing.T, rt *weft.Runtime) {
	model := llm.NewScripted(
		llm.ScriptText("Hello, I can deploy for you."),
		llm.ScriptToolCalls(call("d2", "deploy", `{"env":"staging"}`)),
		llm.ScriptText("The deploy was denied."),
	)
	sess := newAgent(t, rt, "deployer", weft.AgentConfig{Model: model, Tools: deployTools(t)}).NewSession()
	if res, err := sess.Run(t.Context(), "Hi"); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	res, err := sess.Run(t.Context(), "Deploy to staging.")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("run = %+v, %v", res, err)
	}
	res, err = sess.Resume(t.Context(), weft.Deny("d2", "carol", "freeze until Monday"))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("resume = %+v, %v", res, err)
	}
}

// recordRefused: a run waits for an approval; two resumes are refused (an
// unknown id, reviewed arguments that fail the tool's schema) and recorded
// as decision.refused; then the approval is given and the run completes.
func recordRefused(t *testing.T, rt *weft.Runtime) {
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("d3", "deploy", `{"env":"prod"}`)),
		llm.ScriptText("Deployed to prod."),
	)
	sess := newAgent(t, rt, "deployer", weft.AgentConfig{Model: model, Tools: deployTools(t)}).NewSession()
	res, err := sess.Run(t.Context(), "Deploy to prod.")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if _, err := sess.Resume(t.Context(), weft.Approve("d9", "mallory", nil)); !errors.Is(err, weft.ErrUnknownDecision) {
		t.Fatalf("resume of an unknown id: %v", err)
	}
	if _, err := sess.Resume(t.Context(), weft.Approve("d3", "mallory", json.RawMessage(`{"env":7}`))); !errors.Is(err, weft.ErrWrongDecision) {
		t.Fatalf("resume with arguments that fail the schema: %v", err)
	}
	res, err = sess.Resume(t.Context(), weft.Approve("d3", "alice", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("resume = %+v, %v", res, err)
	}
}

// historyPath is the golden file of history name.
func historyPath(name string) string { return filepath.Join("testdata", name+".events.jsonl") }

// loadHistory returns the events of a golden history, recording it first
// when -update is set.
func loadHistory(t testing.TB, h history) []events.Event {
	t.Helper()
	if tt, ok := t.(*testing.T); ok && *update {
		recordHistory(tt, h)
	}
	f, err := os.Open(historyPath(h.name))
	if err != nil {
		t.Fatalf("golden history (record it with -update): %v", err)
	}
	defer f.Close()
	evs, err := events.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		t.Fatalf("%s: empty history", h.name)
	}
	return evs
}

// recorded tracks which histories this process re-recorded already.
var recorded = map[string]bool{}

func recordHistory(t *testing.T, h history) {
	t.Helper()
	if recorded[h.name] {
		return
	}
	store := memstore.New()
	rt, err := weft.Start(t.Context(), weft.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	h.record(t, rt)
	var evs []events.Event
	for ev, err := range store.ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := events.WriteJSONL(&buf, evs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(historyPath(h.name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	recorded[h.name] = true
}
