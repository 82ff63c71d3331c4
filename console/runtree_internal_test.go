package console

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// TestRunTreeFromEvents: run.started's parent fields make the parent
// link; each deferred call waiting for a sub-run makes one child link,
// once however often it is requested; other deferred calls none.
func TestRunTreeFromEvents(t *testing.T) {
	ev := func(typ events.Type, run, call string, data any) events.Event {
		raw, _ := json.Marshal(data)
		return events.Event{Type: typ, RunID: run, ToolCallID: call, Data: raw}
	}
	sub := json.RawMessage(`{"weft.subrun":{"session_id":"s-child","run_id":"r-child","agent":"scout"}}`)
	evs := []events.Event{
		ev(events.TypeRunStarted, "r1", "", events.RunStarted{Agent: "lead", ParentSessionID: "s-up", ParentRunID: "r-up", ParentToolCallID: "c9", Depth: 1}),
		ev(events.TypeDeferredRequested, "r1", "c1", events.DeferredRequested{Tool: "scout", Metadata: sub}),
		ev(events.TypeDeferredRequested, "r1", "c1", events.DeferredRequested{Tool: "scout", Metadata: sub}),
		ev(events.TypeDeferredRequested, "r1", "c2", events.DeferredRequested{Tool: "ticket", Metadata: json.RawMessage(`{"queue":"ops"}`)}),
		ev(events.TypeDeferredRequested, "r-unknown", "c3", events.DeferredRequested{Tool: "scout", Metadata: sub}),
	}
	runs := runTree(evs, projections.SessionArchive{Runs: []*projections.RunRecord{{RunID: "r1", Status: projections.RunWaiting}}})
	if len(runs) != 1 {
		t.Fatalf("runs = %+v, want one", runs)
	}
	r := runs[0]
	if r.Status != projections.RunWaiting || r.Agent != "lead" {
		t.Errorf("run = %+v", r)
	}
	if r.Parent == nil || *r.Parent != (parentLink{SessionID: "s-up", RunID: "r-up", Call: "c9", Depth: 1}) {
		t.Errorf("parent = %+v", r.Parent)
	}
	if want := []childLink{{SessionID: "s-child", RunID: "r-child", Agent: "scout", Call: "c1"}}; len(r.Children) != 1 || r.Children[0] != want[0] {
		t.Errorf("children = %+v, want %+v", r.Children, want)
	}
}
