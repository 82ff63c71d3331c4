package actors

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Given a run awaiting its model, when a capability hook failed (a
// model-request hook: no response; a run-complete hook: with the final
// response), then the run fails with capability_error, the response and
// the failure in one append.
func TestCoreCapabilityFailure(t *testing.T) {
	spec := coreAgent(t, nil)
	used := events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}
	text := &llm.Response{Text: "done", Usage: llm.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}}
	tests := []struct {
		name   string
		reply  modelReply
		events []evt
	}{
		{"request hook", modelReply{capability: "model-request hook 1: down"}, []evt{failed(FailCapability, "model-request hook 1: down", events.Usage{})}},
		{"run-complete hook", modelReply{resp: text, capability: "run-complete hook 1: no"}, []evt{{Type: events.TypeModelResponse},
			{Type: events.TypeUsageSnapshot, Data: events.UsageSnapshot{Scope: "run", Usage: used}}, failed(FailCapability, "run-complete hook 1: no", used)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := given(t, started(), requestEv())
			f := factsOf(st, spec, prepared(t, spec))
			f.modelBusy = true
			mr := tt.reply
			mr.runID, mr.step = rid, 1
			d := world{spec: spec}.coreOf(st, f).modelReply(&mr)
			then(t, d, tt.events, nil, false)
			if d.split {
				t.Error("the failure is split from the response")
			}
		})
	}
}

// handoffReturn is the tool.returned of call id of tool, a success whose
// metadata hands the run to agent to.
func handoffReturn(id, tool, to string) events.Event {
	r := toolsets.Return{CallID: id, ToolName: tool, Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(`"ok"`),
		Metadata: map[string]any{MetaHandoff: to}, Attempts: 1, MaxAttempts: 1}
	return returnedEvent(sid, rid, r).Event
}

// Given a batch whose handoff tool returned, when the run advances, then
// run.handoff is recorded (once) and the fold makes the run the other
// agent's; a return that only claims a handoff under another tool's name,
// or names an agent the host does not know, hands nothing over.
func TestCoreHandoff(t *testing.T) {
	spec, other := coreAgent(t, nil), coreAgent(t, nil)
	look := testLookups{agents: map[string]*AgentSpec{"a": spec, "b": other}}
	tests := []struct {
		name   string
		call   llm.ToolCall
		ret    events.Event
		events []evt
	}{
		{"handoff", callOf("h1", "transfer_to_b", `{}`), handoffReturn("h1", "transfer_to_b", "b"),
			[]evt{{Type: events.TypeRunHandoff, Data: events.RunHandoff{From: "a", To: "b", ToolCallID: "h1"}}}},
		{"a claim under another name", callOf("s1", "sneaky", `{}`), handoffReturn("s1", "sneaky", "b"), nil},
		{"an unknown agent", callOf("h1", "transfer_to_z", `{}`), handoffReturn("h1", "transfer_to_z", "z"),
			[]evt{failed(FailInternal, `handoff to agent "z", which is not registered`, events.Usage{ToolCalls: 1})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := concat([]events.Event{started()}, batchOf(tt.call), []events.Event{tt.ret})
			st := given(t, evs...)
			k := core{session: sid, st: st, f: factsOf(st, spec, prepared(t, spec)), look: look, maxMsg: DefaultMaxPayloadBytes}
			d := k.advance()
			if tt.events == nil {
				for _, rec := range d.recs {
					if rec.Type == events.TypeRunHandoff {
						t.Fatalf("handed over: %+v", rec.data)
					}
				}
				return
			}
			then(t, d, tt.events, d.effects.list(), d.carryOn)
			if tt.name != "handoff" {
				return
			}
			rec := d.recs[0]
			rec.Version = uint64(len(evs) + 1)
			if err := st.Apply(rec.Event); err != nil {
				t.Fatal(err)
			}
			if r := st.Run(rid); r.Agent != "b" {
				t.Fatalf("the run is %q's after the handoff", r.Agent)
			}
			k.st = st
			if again := k.advance(); len(again.recs) > 0 && again.recs[0].Type == events.TypeRunHandoff {
				t.Error("the handoff is recorded twice")
			}
		})
	}
}
