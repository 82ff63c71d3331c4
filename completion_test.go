package weft_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A process that stopped in the middle of a split step (model.response
// stored, its tool.requested and usage.snapshot not) leaves a run that
// recovery completes: the missing events are appended in order, the call
// runs once, and the run completes.
func TestRecoveryCompletesSplitStep(t *testing.T) {
	store := memstore.New()
	session, run := "split", "run-1"
	resp := llm.Response{ToolCalls: []llm.ToolCall{call("c1", "ping", `{}`)}, Usage: llm.Usage{Requests: 1, InputTokens: 5}}
	msg, err := json.Marshal(resp.Message())
	if err != nil {
		t.Fatal(err)
	}
	prior := []events.Event{
		mustEvent(t, events.TypeRunStarted, run, events.RunStarted{Agent: "splitter", Input: json.RawMessage(`"go"`)}),
		mustEvent(t, events.TypeModelRequest, run, events.ModelRequest{Messages: json.RawMessage(`[]`)}),
		mustEvent(t, events.TypeModelResponse, run, events.ModelResponse{Message: msg, ToolCallIDs: []string{"c1"}, Usage: &events.Usage{Requests: 1, InputTokens: 5}}),
	}
	for i := range prior {
		prior[i].SessionID = session
	}
	if _, err := store.Append(t.Context(), events.SessionStream(session), events.NoStream, prior...); err != nil {
		t.Fatal(err)
	}

	rt := startOn(t, store)
	var calls atomic.Int32
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		calls.Add(1)
		return "pong", nil
	})
	a, err := rt.NewAgent("splitter", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptText("done")), Tools: []toolsets.Tool{ping}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Without the completion the run would never move: bound the wait.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := a.Session(session).Wait(ctx, run)
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "done" {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("ping ran %d times, want 1", n)
	}
	want := []events.Type{events.TypeRunStarted, events.TypeModelRequest, events.TypeModelResponse,
		events.TypeToolRequested, events.TypeUsageSnapshot, events.TypeToolStarted, events.TypeToolReturned,
		events.TypeModelRequest, events.TypeModelResponse, events.TypeUsageSnapshot, events.TypeRunCompleted}
	evs := streamEvents(t, rt, session)
	if d := cmp.Diff(want, types(evs)); d != "" {
		t.Errorf("stream (-want +got):\n%s", d)
	}
	var snap events.UsageSnapshot
	if err := json.Unmarshal(evs[4].Data, &snap); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(events.Usage{Requests: 1, InputTokens: 5, ToolCalls: 1}, snap.Usage); d != "" {
		t.Errorf("completed usage.snapshot (-want +got):\n%s", d)
	}
}

func mustEvent(t *testing.T, typ events.Type, run string, data any) events.Event {
	t.Helper()
	ev, err := events.New(typ, data, events.WithRun(run), events.WithID(uuid.Must(uuid.NewV7())))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}
