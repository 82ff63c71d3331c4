package projections_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// subrunHistory is a root run in session s with two sub-runs (sessions c1
// and c2, c2 still waiting for an approval) and a grandchild under c1.
func subrunHistory() []projections.Decoded {
	var pos uint64
	ev := func(typ events.Type, session, run, call string, data any) projections.Decoded {
		pos++
		return projections.Decoded{Event: events.Event{Type: typ, SessionID: session, RunID: run, ToolCallID: call, Position: pos, Stream: events.SessionStream(session)}, Data: data}
	}
	child := func(session, run, parentSession, parentRun, call string, depth int) projections.Decoded {
		return ev(events.TypeRunStarted, session, run, "", events.RunStarted{Agent: "a-" + session, ParentSessionID: parentSession, ParentRunID: parentRun, ParentToolCallID: call, Depth: depth})
	}
	return []projections.Decoded{
		ev(events.TypeRunStarted, "s", "r", "", events.RunStarted{Agent: "planner"}),
		child("c1", "r1", "s", "r", "call1", 1),
		child("c2", "r2", "s", "r", "call2", 1),
		child("g", "rg", "c1", "r1", "deep", 2),
		ev(events.TypeRunCompleted, "g", "rg", "", events.RunCompleted{}),
		ev(events.TypeRunCompleted, "c1", "r1", "", events.RunCompleted{}),
		ev(events.TypeApprovalRequested, "c2", "r2", "t1", events.ApprovalRequested{Tool: "deploy"}),
		ev(events.TypeRunWaiting, "c2", "r2", "", events.RunWaiting{Reason: "approval"}),
		ev(events.TypeRunWaiting, "s", "r", "", events.RunWaiting{Reason: "deferred"}),
	}
}

// TestTree: the tree nests sub-runs under the calls that started them,
// finds a run's root, and renders the same bytes however often it is
// built.
func TestTree(t *testing.T) {
	tree := projections.NewTree()
	for _, ev := range subrunHistory() {
		if err := tree.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	root, ok := tree.Of(projections.RunRef{SessionID: "s", RunID: "r"})
	if !ok {
		t.Fatal("no root")
	}
	type flat struct {
		Session string
		Status  projections.RunStatus
		Depth   int
		Under   string
	}
	var got []flat
	var walk func(n projections.TreeNode, under string)
	walk = func(n projections.TreeNode, under string) {
		got = append(got, flat{n.SessionID, n.Status, n.Depth, under})
		for _, c := range n.Children {
			walk(c, n.SessionID+"/"+c.ParentToolCallID)
		}
	}
	walk(root, "")
	want := []flat{{"s", projections.RunWaiting, 0, ""}, {"c1", projections.RunCompleted, 1, "s/call1"}, {"g", projections.RunCompleted, 2, "c1/deep"}, {"c2", projections.RunWaiting, 1, "s/call2"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	if r := tree.Root(projections.RunRef{SessionID: "g", RunID: "rg"}); r != (projections.RunRef{SessionID: "s", RunID: "r"}) {
		t.Errorf("root of the grandchild: %+v", r)
	}
	if n := tree.Session("c1"); len(n) != 1 || len(n[0].Children) != 1 {
		t.Errorf("session c1: %+v", n)
	}
	var a, b bytes.Buffer
	if err := tree.Render(&a); err != nil {
		t.Fatal(err)
	}
	again := projections.NewTree()
	for _, ev := range subrunHistory() {
		_ = again.Apply(ev)
		_ = again.Apply(ev) // applied twice: no change
	}
	if err := again.Render(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("renders differ:\n%s\n%s", a.String(), b.String())
	}
}

// TestQueueParentChain: a sub-run's pending item carries the chain of
// calls above its run.
func TestQueueParentChain(t *testing.T) {
	q := projections.NewQueue()
	for _, ev := range subrunHistory() {
		if err := q.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	items := q.Items()
	if len(items) != 1 {
		t.Fatalf("items %+v", items)
	}
	want := []projections.ParentCall{{RunRef: projections.RunRef{SessionID: "s", RunID: "r"}, ToolCallID: "call2"}}
	if d := cmp.Diff(want, items[0].Parents); d != "" {
		t.Errorf("parents (-want +got):\n%s", d)
	}
}
