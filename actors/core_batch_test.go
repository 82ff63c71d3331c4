package actors

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Given a run with a batch of calls, when it advances, then the calls that
// need to run are checked (malformed arguments, the approval policy, the
// arguments of remote tools) and dispatched as one batch, parallel or
// sequential; once nothing runs, the calls that wait are requested and the
// run waits.
func TestCoreBatch(t *testing.T) {
	req := func(id, tool string) ToolRequest {
		return ToolRequest{SessionID: sid, RunID: rid, CallID: id, Name: tool}
	}
	dispatch := func(sequential bool, reqs ...ToolRequest) []effect {
		return []effect{effDispatch{run: rid, calls: reqs, sequential: sequential}}
	}
	returned := func(id string, kind toolsets.Kind) evt {
		return evt{Type: events.TypeToolReturned, Call: id, Kind: kind}
	}
	run := func(calls ...llm.ToolCall) []events.Event {
		return concat([]events.Event{started()}, batchOf(calls...))
	}
	deploy := callOf("a", "deploy", `{"env":"prod"}`)
	policyStop := returnedEvent(sid, rid, policyReturn(&CallState{ID: "a", Tool: "deploy"})).Event
	approved := concat(waitingFor(), []events.Event{
		ev(events.TypeApprovalDecided, "a", events.ApprovalDecided{Approved: true, By: "u", Reason: "fine"}),
		ev(events.TypeRunResumed, "", events.RunResumed{ToolCallIDs: []string{"a"}}),
	})
	why := "the agent's approval policy requires approval for this tool"
	tests := []struct {
		name     string
		given    []events.Event
		remote   []string
		noPrep   bool
		inFlight []string
		batching bool
		events   []evt
		effects  []effect
		carryOn  bool
	}{
		{name: "parallel", given: run(callOf("a", "echo", `{}`), callOf("b", "safe", `{}`)),
			effects: dispatch(false, req("a", "echo"), req("b", "safe"))},
		{name: "a sequential tool", given: run(callOf("a", "echo", `{}`), callOf("b", "seq", `{}`)),
			effects: dispatch(true, req("a", "echo"), req("b", "seq"))},
		{name: "a repeated tool", given: run(callOf("a", "echo", `{}`), callOf("b", "echo", `{}`)),
			effects: dispatch(true, req("a", "echo"), req("b", "echo"))},
		{name: "a repeated concurrent-safe tool", given: run(callOf("a", "safe", `{}`), callOf("b", "safe", `{}`)),
			effects: dispatch(false, req("a", "safe"), req("b", "safe"))},
		{name: "the approval policy stops a call", given: run(deploy),
			events: []evt{returned("a", toolsets.KindApprovalRequired)}, carryOn: true},
		{name: "the approval policy stops one call, the other runs", given: run(deploy, callOf("b", "echo", `{}`)),
			events: []evt{returned("a", toolsets.KindApprovalRequired)}, effects: dispatch(false, req("b", "echo"))},
		{name: "a gated call's arguments are checked first", given: run(callOf("a", "deploy", `{"env":7}`)),
			events: []evt{returned("a", toolsets.KindInvalidArguments)}, carryOn: true},
		{name: "a remote tool's arguments are checked", given: run(callOf("a", "far", `{"env":7}`)), remote: []string{"far"},
			events: []evt{returned("a", toolsets.KindInvalidArguments)}, carryOn: true},
		{name: "a remote tool's valid arguments leave", given: run(callOf("a", "far", `{"env":"x"}`)), remote: []string{"far"},
			effects: dispatch(false, req("a", "far"))},
		{name: "a local tool's arguments are checked where it runs", given: run(callOf("a", "far", `{"env":7}`)),
			effects: dispatch(false, req("a", "far"))},
		{name: "malformed arguments", given: run(callOf("a", "echo", `{"env":`)),
			events: []evt{returned("a", toolsets.KindInvalidArguments)}, carryOn: true},
		{name: "an unknown tool runs (and returns not_found)", given: run(callOf("a", "nope", `{}`)),
			effects: dispatch(false, req("a", "nope"))},
		{name: "an approved call runs with its approval", given: approved,
			effects: dispatch(false, ToolRequest{SessionID: sid, RunID: rid, CallID: "a", Name: "deploy", Approval: &toolsets.Approval{DecidedBy: "u", Note: "fine"}})},
		{name: "tools not prepared", given: approved, noPrep: true,
			effects: []effect{effPrepare{run: rid, step: 1, forBatch: true}}},
		{name: "calls in flight", given: run(callOf("a", "echo", `{}`)), inFlight: []string{"a"}},
		{name: "a batch runs already", given: run(callOf("a", "echo", `{}`), callOf("b", "echo", `{}`)), inFlight: []string{"a"}, batching: true},
		{name: "wait for an approval", given: append(run(deploy), policyStop),
			events: []evt{{Type: events.TypeApprovalRequested, Call: "a", Data: events.ApprovalRequested{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), Reason: why}},
				{Type: events.TypeRunWaiting, Data: events.RunWaiting{Reason: "approval", ToolCallIDs: []string{"a"}}}}},
		{name: "wait for a deferred call", given: append(run(callOf("a", "echo", `{}`)), ret("a", "echo", toolsets.KindCallDeferred, `"later"`)),
			events: []evt{{Type: events.TypeDeferredRequested, Call: "a", Data: events.DeferredRequested{Tool: "echo", Arguments: json.RawMessage(`{}`)}},
				{Type: events.TypeRunWaiting, Data: events.RunWaiting{Reason: "deferred", ToolCallIDs: []string{"a"}}}}},
		{name: "wait for both", given: append(run(deploy, callOf("b", "echo", `{}`)), policyStop, ret("b", "echo", toolsets.KindCallDeferred, `"later"`)),
			events: []evt{{Type: events.TypeApprovalRequested, Call: "a"}, {Type: events.TypeDeferredRequested, Call: "b"},
				{Type: events.TypeRunWaiting, Data: events.RunWaiting{Reason: "approval,deferred", ToolCallIDs: []string{"a", "b"}}}}},
		{name: "requested already, not waiting yet", given: append(run(deploy), policyStop, ev(events.TypeApprovalRequested, "a", events.ApprovalRequested{Tool: "deploy"})),
			events: []evt{{Type: events.TypeRunWaiting, Data: events.RunWaiting{Reason: "approval", ToolCallIDs: []string{"a"}}}}},
		{name: "no waiting while a call runs", given: append(run(deploy, callOf("b", "echo", `{}`)), policyStop), inFlight: []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := coreAgent(t, nil)
			st := given(t, tt.given...)
			f := factsOf(st, spec, prepared(t, spec))
			if tt.noPrep {
				f.prep = nil
			}
			for _, id := range tt.inFlight {
				f.inFlight[id] = true
			}
			f.batching = tt.batching
			d := world{spec: spec, remote: tt.remote}.coreOf(st, f).advance()
			then(t, d, tt.events, tt.effects, tt.carryOn)
			if len(d.recs) > 0 && !d.split {
				t.Error("a batch's events are not split")
			}
		})
	}
}
