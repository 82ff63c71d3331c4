package actors

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// waitingFor is run rid waiting for the approval of call a (deploy) that
// the agent's policy stopped.
func waitingFor() []events.Event {
	a := callOf("a", "deploy", `{"env":"prod"}`)
	return concat([]events.Event{started()}, batchOf(a), []events.Event{
		returnedEvent(sid, rid, policyReturn(&CallState{ID: "a", Tool: "deploy"})).Event,
		ev(events.TypeApprovalRequested, "a", events.ApprovalRequested{Tool: "deploy", Arguments: a.Arguments}),
		ev(events.TypeRunWaiting, "", events.RunWaiting{Reason: "approval", ToolCallIDs: []string{"a"}}),
	})
}

// Given a session's events, when a command comes, then what it records
// and how it is answered. The resume's own rules (which decisions fit
// which pending items) are decide's, tested by TestDecisions; here, how
// the core carries a resume out.
func TestCoreCommands(t *testing.T) {
	spec := coreAgent(t, nil)
	prep := prepared(t, spec)
	w := world{spec: spec}
	hi := StartCommand{RunID: rid, Agent: "a", Prompt: "hi"}
	echo2 := concat([]events.Event{started()}, batchOf(callOf("a", "echo", `{}`), callOf("b", "echo", `{}`)),
		[]events.Event{ret("a", "echo", toolsets.KindSuccess, `"x"`)})
	approve := ResumeCommand{Decisions: []Decision{{ID: "a", Action: ActionApprove, By: "u"}}}
	reviewed := ResumeCommand{Decisions: []Decision{{ID: "a", Action: ActionApprove, By: "u", Arguments: json.RawMessage(`{"env":"dev"}`)}}}
	reply := []effect{effReply{runID: rid}}
	refuse := func(sentinel error) []effect {
		return []effect{effReply{err: commandError("", "", sentinel, "")}}
	}
	tests := []struct {
		name      string
		given     []events.Event
		noFacts   bool // the actor has no memory of the run (a restart)
		preparing bool // the run's tools are being prepared, none yet
		verb      string
		body      any
		derr      error
		held      bool
		events    []evt
		effects   []effect
		carryOn   bool
	}{
		{name: "start", verb: VerbStart, body: hi,
			events:  []evt{{Type: events.TypeRunStarted, Data: events.RunStarted{Agent: "a", Input: json.RawMessage(`"hi"`)}}},
			effects: reply, carryOn: true},
		{name: "start with metadata", verb: VerbStart, body: StartCommand{RunID: rid, Agent: "a", Prompt: "hi", Metadata: map[string]any{"k": 1}},
			events:  []evt{{Type: events.TypeRunStarted, Data: events.RunStarted{Agent: "a", Input: json.RawMessage(`"hi"`), Metadata: json.RawMessage(`{"k":1}`)}}},
			effects: reply, carryOn: true},
		{name: "retried start", given: []events.Event{started()}, verb: VerbStart, body: hi, effects: reply, carryOn: true},
		{name: "start of an existing run with another prompt", given: []events.Event{started()}, verb: VerbStart,
			body: StartCommand{RunID: rid, Agent: "a", Prompt: "other"}, effects: refuse(ErrBadCommand)},
		{name: "busy session", given: []events.Event{started()}, verb: VerbStart,
			body: StartCommand{RunID: "r2", Agent: "a", Prompt: "hi"}, effects: refuse(ErrSessionBusy)},
		{name: "unknown agent", verb: VerbStart, body: StartCommand{RunID: rid, Agent: "nope", Prompt: "hi"}, effects: refuse(ErrUnknownAgent)},
		{name: "start without a run id", verb: VerbStart, body: StartCommand{Agent: "a", Prompt: "hi"}, effects: refuse(ErrBadCommand)},
		{name: "undecodable start", verb: VerbStart, derr: errors.New("bad json"), effects: refuse(ErrBadCommand)},
		{name: "unknown verb", verb: "pause", effects: refuse(ErrBadCommand)},

		{name: "cancel closes the dangling calls", given: echo2, verb: VerbCancel, body: CancelCommand{By: "bob"},
			events: []evt{
				{Type: events.TypeToolReturned, Call: "b", Data: events.ToolReturned{Tool: "echo", IsError: true}, Kind: toolsets.KindCancelled},
				{Type: events.TypeRunCancelled, Data: events.RunCancelled{Reason: "the run was cancelled", By: "bob"}},
			}, effects: reply, carryOn: true},
		{name: "cancel a waiting run", given: waitingFor(), verb: VerbCancel, body: CancelCommand{RunID: rid, Reason: "enough"},
			events: []evt{
				{Type: events.TypeToolReturned, Call: "a", Data: events.ToolReturned{Tool: "deploy", IsError: true}, Kind: toolsets.KindCancelled},
				{Type: events.TypeRunCancelled, Data: events.RunCancelled{Reason: "enough"}},
			}, effects: reply, carryOn: true},
		{name: "cancel an unknown run", given: []events.Event{started()}, verb: VerbCancel, body: CancelCommand{RunID: "x"}, effects: refuse(ErrUnknownRun)},
		{name: "cancel an ended run", given: []events.Event{started(), ev(events.TypeRunCancelled, "", events.RunCancelled{})},
			verb: VerbCancel, body: CancelCommand{RunID: rid}, effects: refuse(ErrRunEnded)},
		{name: "undecodable cancel", verb: VerbCancel, derr: errors.New("bad json"), effects: refuse(ErrBadCommand)},

		{name: "resume", given: waitingFor(), verb: VerbResume, body: approve,
			events:  []evt{{Type: events.TypeApprovalDecided, Call: "a", Data: events.ApprovalDecided{Approved: true, By: "u"}}, {Type: events.TypeRunResumed, Data: events.RunResumed{ToolCallIDs: []string{"a"}}}},
			effects: reply, carryOn: true},
		{name: "refused resume is recorded", given: waitingFor(), verb: VerbResume, body: ResumeCommand{Decisions: []Decision{{ID: "a", Action: ActionComplete}}},
			events:  []evt{{Type: events.TypeDecisionRefused, Call: "a"}},
			effects: refuse(ErrWrongDecision)},
		{name: "reviewed arguments checked against the prepared tools", given: waitingFor(), verb: VerbResume, body: reviewed,
			events: []evt{{Type: events.TypeApprovalDecided, Call: "a", Data: events.ApprovalDecided{Approved: true, By: "u", Arguments: json.RawMessage(`{"env":"dev"}`)}},
				{Type: events.TypeRunResumed}},
			effects: reply, carryOn: true},
		{name: "reviewed arguments wait for the tools", given: waitingFor(), noFacts: true, verb: VerbResume, body: reviewed,
			effects: []effect{effHold{}, effPrepare{run: rid, step: 1}}},
		{name: "reviewed arguments wait for the preparation under way", given: waitingFor(), preparing: true, verb: VerbResume, body: reviewed,
			effects: []effect{effHold{}}},
		{name: "reviewed arguments held once already", given: waitingFor(), noFacts: true, held: true, verb: VerbResume, body: reviewed,
			events: []evt{{Type: events.TypeDecisionRefused, Call: "a"}}, effects: refuse(ErrWrongDecision)},
		{name: "a resume without reviewed arguments is not held", given: waitingFor(), noFacts: true, verb: VerbResume, body: approve,
			events: []evt{{Type: events.TypeApprovalDecided, Call: "a"}, {Type: events.TypeRunResumed}}, effects: reply, carryOn: true},
		{name: "undecodable resume", verb: VerbResume, derr: errors.New("bad json"), effects: refuse(ErrBadCommand)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := given(t, tt.given...)
			f := factsOf(st, spec, prep)
			switch {
			case tt.noFacts:
				f = runFacts{}
			case tt.preparing:
				f.prep, f.preparing = nil, true
			}
			d := w.coreOf(st, f).command(tt.verb, tt.body, tt.derr, tt.held)
			then(t, d, tt.events, tt.effects, tt.carryOn)
			if d.split {
				t.Error("a command's events are split")
			}
		})
	}
}

// A resumed run prepares its toolsets again: its decision drops the
// inventory from the facts.
func TestCoreResumeDropsInventory(t *testing.T) {
	spec := coreAgent(t, nil)
	st := given(t, waitingFor()...)
	d := world{spec: spec}.coreOf(st, factsOf(st, spec, prepared(t, spec))).command(VerbResume, ResumeCommand{Decisions: []Decision{{ID: "a", Action: ActionDeny}}}, nil, false)
	if !d.newFacts || d.facts.prep != nil || d.facts.last != nil {
		t.Fatalf("facts after a resume: %+v", d.facts)
	}
	var types []events.Type
	for _, rec := range d.recs {
		types = append(types, rec.Type)
	}
	if want := []events.Type{events.TypeApprovalDecided, events.TypeRunResumed, events.TypeToolReturned}; !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
}
