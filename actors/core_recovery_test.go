package actors

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Given a running run's events and the facts this process has of it (none
// after a restart), when it advances, then what it does next: prepare its
// tools, request its model (within its limits), complete a split append
// that stopped part way, fail a spent budget, complete.
func TestCoreAdvance(t *testing.T) {
	echoA := callOf("a", "echo", `{}`)
	done := concat([]events.Event{started()}, batchOf(echoA), []events.Event{ret("a", "echo", toolsets.KindSuccess, `"x"`)})
	awaiting := []events.Event{started(), requestEv()}
	twoCalls := response(echoA, callOf("b", "restart", `{}`))
	due := events.Usage{ToolCalls: 2}
	spent := returnedEvent(sid, rid, toolsets.Return{CallID: "a", ToolName: "echo", Kind: toolsets.KindInvalidArguments, IsError: true,
		Content: json.RawMessage(`"bad"`), Attempts: 1, MaxAttempts: 1}).Event
	rejected := func() []events.Event {
		msg, _ := json.Marshal((&llm.Response{Text: "no"}).Message())
		return []events.Event{requestEv(), ev(events.TypeModelResponse, "", events.ModelResponse{Message: msg, OutputRejected: "too short"}),
			ev(events.TypeUsageSnapshot, "", events.UsageSnapshot{Scope: "run"})}
	}
	step := func(n int) []effect {
		return []effect{effCallModel{req: &llm.Request{Run: llm.RunInfo{SessionID: sid, RunID: rid, Step: n}}}}
	}
	request := []evt{{Type: events.TypeModelRequest}}
	prepare := func(n int, forBatch bool) []effect {
		return []effect{effPrepare{run: rid, step: n, forBatch: forBatch}}
	}
	tests := []struct {
		name      string
		given     []events.Event
		spec      func(*AgentSpec)
		noPrep    bool // no inventory (a new run, or a restart)
		stale     bool // the inventory was made for the step before the run's
		forBatch  bool
		preparing bool
		modelBusy bool
		events    []evt
		effects   []effect
		split     bool
		carryOn   bool
		prepSet   int // the prepared step the decision leaves in the facts (0: none changed)
	}{
		{name: "a new run prepares its tools", given: []events.Event{started()}, noPrep: true, effects: prepare(0, false)},
		{name: "a preparation under way", given: []events.Event{started()}, noPrep: true, preparing: true},
		{name: "prepared: the model is asked", given: []events.Event{started()}, events: request, effects: step(1), split: true},
		{name: "a finished batch: the next step", given: done, events: request, effects: step(2), split: true},
		{name: "toolsets are prepared for each step", given: done, stale: true, effects: prepare(1, false)},
		{name: "loose tools only: the inventory serves every step", given: done, stale: true,
			spec: func(s *AgentSpec) { s.Toolsets = nil }, events: request, effects: step(2), split: true, prepSet: 1},
		{name: "an inventory made for a batch is made again", given: done, forBatch: true, effects: prepare(1, false)},
		{name: "the request limit", given: done, spec: func(s *AgentSpec) { s.Limits.Requests = limit(1) },
			events: []evt{failed(FailUsageLimit, "the run reached its limit of 1 model requests", events.Usage{ToolCalls: 1})}},
		{name: "within the request limit", given: done, spec: func(s *AgentSpec) { s.Limits.Requests = limit(2) }, events: request, effects: step(2), split: true},
		{name: "a request without its response, restarted", given: awaiting, noPrep: true, effects: prepare(0, false)},
		{name: "a request without its response, prepared", given: awaiting, effects: step(1)},
		{name: "a request whose model is called", given: awaiting, modelBusy: true},
		{name: "a response without its tool.requested", given: append(slicesOf(awaiting), twoCalls),
			events: []evt{{Type: events.TypeToolRequested, Call: "a", Data: events.NewToolRequested("echo", "", json.RawMessage(`{}`))},
				{Type: events.TypeToolRequested, Call: "b", Data: events.NewToolRequested("restart", "ops", json.RawMessage(`{}`))},
				{Type: events.TypeUsageSnapshot, Data: events.UsageSnapshot{Scope: "run", Usage: due}}},
			split: true, carryOn: true},
		{name: "a response without its usage.snapshot", given: append(slicesOf(awaiting), twoCalls,
			ev(events.TypeToolRequested, "a", events.NewToolRequested("echo", "", nil)), ev(events.TypeToolRequested, "b", events.NewToolRequested("restart", "ops", nil))),
			events: []evt{{Type: events.TypeUsageSnapshot, Data: events.UsageSnapshot{Scope: "run", Usage: due}}}, split: true, carryOn: true},
		{name: "a response without its tool.requested, restarted", given: append(slicesOf(awaiting), twoCalls), noPrep: true,
			effects: prepare(1, true)},
		{name: "a final text without its usage.snapshot", given: append(slicesOf(awaiting), response()),
			events: []evt{{Type: events.TypeUsageSnapshot}}, split: true, carryOn: true},
		{name: "a final text without run.completed", given: append(slicesOf(awaiting), response(), ev(events.TypeUsageSnapshot, "", events.UsageSnapshot{Scope: "run"})),
			events: []evt{{Type: events.TypeRunCompleted, Data: events.RunCompleted{Output: json.RawMessage(`"done"`), Usage: &events.Usage{}}}}},
		{name: "a tool's retry budget spent", given: concat([]events.Event{started()}, batchOf(echoA), []events.Event{spent}),
			events: []evt{failed(FailToolRetryLimit, `tool "echo" exceeded its retry budget of 0 in this run`, events.Usage{ToolCalls: 1})}},
		{name: "the output budget spent", given: concat([]events.Event{started()}, rejected(), rejected(), rejected()),
			events: []evt{failed(FailOutputRetryLimit, "the run's output was rejected 3 times; the budget is 2", events.Usage{})}},
		{name: "within the output budget", given: concat([]events.Event{started()}, rejected(), rejected()), events: request, effects: step(3), split: true},
		{name: "an agent this host lacks", given: []events.Event{ev(events.TypeRunStarted, "", events.RunStarted{Agent: "gone", Input: json.RawMessage(`"hi"`)})},
			events: []evt{failed(FailInternal, `weft: unknown agent: "gone"`, events.Usage{})}},
		{name: "a waiting run", given: waitingFor()},
		{name: "an ended run", given: []events.Event{started(), ev(events.TypeRunCancelled, "", events.RunCancelled{})}},
		{name: "no run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := coreAgent(t, tt.spec)
			st := given(t, tt.given...)
			f := factsOf(st, spec, prepared(t, spec))
			if tt.stale {
				f.prepStep--
			}
			if tt.noPrep {
				f.prep, f.last = nil, nil
			}
			f.forBatch, f.preparing, f.modelBusy = tt.forBatch, tt.preparing, tt.modelBusy
			d := world{spec: spec}.coreOf(st, f).advance()
			then(t, d, tt.events, tt.effects, tt.carryOn)
			if len(d.recs) > 0 && d.split != tt.split {
				t.Errorf("split = %v, want %v", d.split, tt.split)
			}
			if tt.prepSet != 0 && (!d.newFacts || d.facts.prepStep != tt.prepSet) {
				t.Errorf("facts %+v, want the inventory kept for step %d", d.facts, tt.prepSet)
			}
		})
	}
}

func slicesOf(evs []events.Event) []events.Event { return append([]events.Event(nil), evs...) }
