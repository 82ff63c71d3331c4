package actors

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// Given a batch of calls a and b (echo) in flight, when a tool report
// comes, then the event that records it, which the shell queues; a call
// that returned is no longer in flight.
func TestCoreToolReports(t *testing.T) {
	spec := coreAgent(t, nil)
	batch := concat([]events.Event{started()}, batchOf(callOf("a", "echo", `{}`), callOf("b", "echo", `{}`)))
	info := &events.ErrorInfo{Kind: "execution", Message: "flaky"}
	loaded, _ := json.Marshal(toolsets.SearchRecord{Outcome: toolsets.SearchLoaded, Toolset: "find", Query: "q", Tools: []string{"x"}})
	ok := &toolsets.Return{Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(`1`), Attempts: 1}
	big := &toolsets.Return{Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(`"` + strings.Repeat("x", 200) + `"`), Attempts: 1}
	tests := []struct {
		name     string
		run      string // default rid
		report   ToolReport
		inFlight []string // default a and b
		maxMsg   int
		events   []evt
		landed   bool // the call is no longer in flight
	}{
		{name: "started", report: ToolReport{Type: ReportStarted, CallID: "a", Attempt: 1},
			events: []evt{{Type: events.TypeToolStarted, Call: "a", Data: events.ToolStarted{Tool: "echo", Attempt: 1}}}},
		{name: "retried", report: ToolReport{Type: ReportRetried, CallID: "a", Attempt: 1, Error: info},
			events: []evt{{Type: events.TypeToolRetried, Call: "a", Data: events.ToolRetried{Tool: "echo", Attempt: 1, Error: *info}}}},
		{name: "retried without an error", report: ToolReport{Type: ReportRetried, CallID: "a", Attempt: 2},
			events: []evt{{Type: events.TypeToolRetried, Call: "a", Data: events.ToolRetried{Tool: "echo", Attempt: 2, Error: events.ErrorInfo{Message: "attempt failed"}}}}},
		{name: "progress", report: ToolReport{Type: ReportProgress, CallID: "b", Attempt: 1, Progress: &toolsets.Progress{Name: "step", Data: json.RawMessage(`3`)}},
			events: []evt{{Type: events.TypeToolProgress, Call: "b", Data: events.ToolProgress{Tool: "echo", Attempt: 1, Name: "step", Data: json.RawMessage(`3`)}}}},
		{name: "a search's progress", report: ToolReport{Type: ReportProgress, CallID: "b", Progress: &toolsets.Progress{Name: "tool_search.loaded", Data: loaded}},
			events: []evt{{Type: events.TypeToolSearchLoaded, Call: "b", Data: events.ToolSearchLoaded{Query: "q", Tools: []string{"x"}, Toolset: "find"}}}},
		{name: "returned", report: ToolReport{Type: ReportReturned, CallID: "a", Return: ok}, landed: true,
			events: []evt{{Type: events.TypeToolReturned, Call: "a", Data: events.ToolReturned{Tool: "echo", Attempt: 1}, Kind: toolsets.KindSuccess}}},
		{name: "returned too large", maxMsg: 100, report: ToolReport{Type: ReportReturned, CallID: "a", Return: big}, landed: true,
			events: []evt{{Type: events.TypeToolReturned, Call: "a", Kind: toolsets.KindExecution}}},
		{name: "returned without a return", report: ToolReport{Type: ReportReturned, CallID: "a"}},
		{name: "a late report of a closed call", inFlight: []string{"b"}, report: ToolReport{Type: ReportReturned, CallID: "a", Return: ok}},
		{name: "a report of another run", run: "r2", report: ToolReport{Type: ReportStarted, CallID: "a", Attempt: 1}},
		{name: "a report of an unknown call", report: ToolReport{Type: ReportStarted, CallID: "zz", Attempt: 1}},
		{name: "a heartbeat", report: ToolReport{Type: ReportHeartbeat, CallID: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := given(t, batch...)
			f := factsOf(st, spec, prepared(t, spec))
			in := tt.inFlight
			if in == nil {
				in = []string{"a", "b"}
			}
			for _, id := range in {
				f.inFlight[id] = true
			}
			before := maps.Clone(f.inFlight)
			run := tt.run
			if run == "" {
				run = rid
			}
			d := world{spec: spec, maxMsg: tt.maxMsg}.coreOf(st, f).toolReport(run, tt.report)
			then(t, d, tt.events, nil, false)
			if len(d.recs) > 0 && !d.queue {
				t.Error("a tool event is not queued")
			}
			if !maps.Equal(f.inFlight, before) {
				t.Errorf("the report changed the facts it was given: %v", f.inFlight)
			}
			landed := d.returned == tt.report.CallID
			if landed != tt.landed {
				t.Errorf("call %s landed = %v, want %v", tt.report.CallID, landed, tt.landed)
			}
		})
	}
}

// The queued tool events are appended as steps of their own; the run
// carries on once a call returned. A finished batch carries it on too.
func TestCoreFlushAndBatchEnd(t *testing.T) {
	startedRec := newRecord(events.TypeToolStarted, sid, rid, "a", events.ToolStarted{Tool: "echo", Attempt: 1})
	returnedRec := returnedEvent(sid, rid, toolsets.Return{CallID: "a", ToolName: "echo", Kind: toolsets.KindSuccess})
	if d := flushed([]record{startedRec}); !d.split || d.carryOn {
		t.Errorf("flush of reports: split %v, carry on %v", d.split, d.carryOn)
	}
	if d := flushed([]record{startedRec, returnedRec}); !d.split || !d.carryOn {
		t.Errorf("flush with a return: split %v, carry on %v", d.split, d.carryOn)
	}
	st := given(t, started())
	k := world{spec: coreAgent(t, nil)}.coreOf(st, runFacts{run: rid, batching: true})
	if d := k.batchFinished(rid); !d.carryOn || !d.newFacts || d.facts.batching {
		t.Errorf("batch finished: %+v", d)
	}
	if d := k.batchFinished("r2"); d.carryOn || d.newFacts {
		t.Errorf("another run's batch finished: %+v", d)
	}
}
