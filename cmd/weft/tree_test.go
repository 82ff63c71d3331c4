package main

import (
	"bytes"
	"testing"

	"github.com/weft-run/weft/projections"
)

// TestPrintTree: weft show prints a run's sub-runs under the calls that
// started them, and a sub-run's parent; nothing for a session without.
func TestPrintTree(t *testing.T) {
	parent := projections.RunRef{SessionID: "s", RunID: "r"}
	runs := []projections.TreeNode{{RunRef: parent, Agent: "planner", Status: projections.RunCompleted, Children: []projections.TreeNode{
		{RunRef: projections.RunRef{SessionID: "c1", RunID: "r1"}, Agent: "researcher", Status: projections.RunCompleted, Depth: 1, Parent: &parent, ParentToolCallID: "call1"},
	}}}
	var b bytes.Buffer
	printTree(&b, runs)
	want := "\nrun tree:\n  r  agent=planner  status=completed  session=s\n    └ call call1:\n      r1  agent=researcher  status=completed  session=c1\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printTree(&b, []projections.TreeNode{{RunRef: parent, Status: projections.RunCompleted}})
	if b.Len() != 0 {
		t.Errorf("a session without sub-runs printed %q", b.String())
	}
	b.Reset()
	printTree(&b, runs[0].Children)
	if want := "\nrun tree:\n  r1 is a sub-run of session s run r (call call1)\n  r1  agent=researcher  status=completed  session=c1\n"; b.String() != want {
		t.Errorf("got %q", b.String())
	}
}
