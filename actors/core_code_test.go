package actors

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// codeSpec is coreAgent with the code-mode tool run_code.
func codeSpec(t *testing.T, limit *int64) *AgentSpec {
	t.Helper()
	return coreAgent(t, func(s *AgentSpec) {
		s.Tools = append(s.Tools, codemode.NewTool(&codemode.Env{Tools: s.Tools}))
		s.Limits.ToolCalls = limit
	})
}

// asksFor is the return of a code call whose program asks for a call.
func asksFor(name, args string) *toolsets.Return {
	return &toolsets.Return{Kind: toolsets.KindCallDeferred, Control: &toolsets.Control{Message: "the program calls " + name,
		Metadata: map[string]any{toolsets.MetaCodeCall: toolsets.CodeCall{Name: name, Arguments: json.RawMessage(args)}}}}
}

func child(id, parent, tool string) events.Event {
	d := events.NewToolRequested(tool, "", json.RawMessage(`{"env":"x"}`))
	d.Parent = parent
	return ev(events.TypeToolRequested, id, d)
}

// Given a code call c1 in flight, when its program asks for a call, then
// the call is requested as c1's child c1.<n> (not c1's return), queued,
// and c1 is no longer in flight; past the run's tool-call limit c1 returns
// saying so instead. A tool that is not a code tool asking the same is an
// ordinary deferred return.
func TestCoreCodeCall(t *testing.T) {
	two := int64(2)
	program := concat([]events.Event{started()}, batchOf(callOf("c1", codemode.ToolName, `{"code":"echo(env='x')"}`), callOf("e1", "echo", `{}`)))
	tests := []struct {
		name   string
		limit  *int64
		given  []events.Event
		call   string
		ret    *toolsets.Return
		events []evt
	}{
		{name: "first call", call: "c1", ret: asksFor("echo", `{"env":"x"}`),
			events: []evt{{Type: events.TypeToolRequested, Call: "c1.1", Data: events.ToolRequested{Tool: "echo", Arguments: json.RawMessage(`{"env":"x"}`), Parent: "c1"}}}},
		{name: "next call", given: []events.Event{child("c1.1", "c1", "echo"), ret("c1.1", "echo", toolsets.KindSuccess, `"x"`)}, call: "c1", ret: asksFor("deploy", `{}`),
			events: []evt{{Type: events.TypeToolRequested, Call: "c1.2", Data: events.ToolRequested{Tool: "deploy", Arguments: json.RawMessage(`{}`), Parent: "c1"}}}},
		{name: "over the tool-call limit", limit: &two, call: "c1", ret: asksFor("echo", `{}`),
			events: []evt{{Type: events.TypeToolReturned, Call: "c1", Kind: toolsets.KindUserError}}},
		{name: "not a code tool", call: "e1", ret: asksFor("echo", `{}`),
			events: []evt{{Type: events.TypeToolReturned, Call: "e1", Kind: toolsets.KindCallDeferred}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := codeSpec(t, tt.limit)
			st := given(t, concat(program, tt.given)...)
			f := factsOf(st, spec, prepared(t, spec))
			f.inFlight[tt.call] = true
			d := world{spec: spec}.coreOf(st, f).toolReport(rid, ToolReport{Type: ReportReturned, CallID: tt.call, Return: tt.ret})
			then(t, d, tt.events, nil, false)
			if !d.queue || d.returned != tt.call {
				t.Errorf("queue %v, returned %q", d.queue, d.returned)
			}
		})
	}
}

// Given a code call whose child waits (in flight, or for approval), the
// code call is not run again; once the child returned, it runs again with
// the journal of its children's returns. The children count as tool
// calls in the fold, and only the code call's return reaches the model.
func TestCoreCodeReplay(t *testing.T) {
	spec := codeSpec(t, nil)
	base := concat([]events.Event{started()}, batchOf(callOf("c1", codemode.ToolName, `{"code":"x"}`)), []events.Event{child("c1.1", "c1", "echo")})
	st := given(t, base...)
	if r := st.Run(rid); r.Usage.ToolCalls != 2 {
		t.Fatalf("tool calls = %d, want 2 (the code call and its child)", r.Usage.ToolCalls)
	}
	d := world{spec: spec}.coreOf(st, factsOf(st, spec, prepared(t, spec))).advance()
	disp, ok := onlyDispatch(d)
	if !ok || len(disp.calls) != 1 || disp.calls[0].CallID != "c1.1" {
		t.Fatalf("dispatched %+v; want the child only", d.effects.list())
	}

	st = given(t, append(base, ret("c1.1", "echo", toolsets.KindSuccess, `"x"`))...)
	d = world{spec: spec}.coreOf(st, factsOf(st, spec, prepared(t, spec))).advance()
	disp, ok = onlyDispatch(d)
	if !ok || len(disp.calls) != 1 || disp.calls[0].CallID != "c1" {
		t.Fatalf("dispatched %+v; want the code call again", d.effects.list())
	}
	if in := disp.calls[0].Code; in == nil || len(in.Journal) != 1 || string(in.Journal[0].Content) != `"x"` {
		t.Fatalf("journal = %+v", disp.calls[0].Code)
	}

	st = given(t, append(base, ret("c1.1", "echo", toolsets.KindSuccess, `"x"`), ret("c1", codemode.ToolName, toolsets.KindSuccess, `"done"`))...)
	r := st.Run(rid)
	last := r.Messages[len(r.Messages)-1].ToolReturns()
	if len(last) != 1 || last[0].CallID != "c1" {
		t.Fatalf("returns to the model: %+v", last)
	}
}

func onlyDispatch(d decision) (effDispatch, bool) {
	for _, e := range d.effects.list() {
		if disp, ok := e.(effDispatch); ok {
			return disp, true
		}
	}
	return effDispatch{}, false
}
