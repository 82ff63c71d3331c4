package projections

import (
	"io"

	"github.com/weft-run/weft/events"
)

// RunRef names a run: its session and id.
type RunRef struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
}

// TreeNode is a run in the run tree, with the runs it started as
// sub-runs (an agent called as a tool), nested.
type TreeNode struct {
	RunRef
	Agent  string    `json:"agent,omitempty"`
	Status RunStatus `json:"status"`
	// Depth is the run's depth under its root run (0: a root).
	Depth int `json:"depth"`
	// Parent is the run that started this one, and ParentToolCallID the
	// call; nil for a root run.
	Parent           *RunRef `json:"parent,omitempty"`
	ParentToolCallID string  `json:"parent_tool_call_id,omitempty"`
	// Children are the sub-runs, in the order they started.
	Children []TreeNode `json:"children,omitempty"`
}

// Tree is the run-tree projection: every run, and which runs each one
// started as sub-runs (run.started's parent fields), across sessions.
type Tree struct {
	checkpoint
	nodes    map[RunRef]*treeState
	children map[RunRef][]RunRef
	roots    []RunRef
	order    []RunRef // every run, in the order it started
}

type treeState struct {
	node TreeNode
}

var _ Projection = (*Tree)(nil)

// NewTree returns an empty run tree.
func NewTree() *Tree {
	return &Tree{nodes: map[RunRef]*treeState{}, children: map[RunRef][]RunRef{}}
}

// Name returns "tree".
func (t *Tree) Name() string { return "tree" }

// Reset empties the tree.
func (t *Tree) Reset() { *t = *NewTree() }

// Apply folds ev into the tree.
func (t *Tree) Apply(ev Decoded) error {
	if t.seen(ev.Position) {
		return nil
	}
	t.pos = ev.Position
	ref := RunRef{SessionID: ev.SessionID, RunID: ev.RunID}
	switch d := ev.Data.(type) {
	case events.RunStarted:
		n := TreeNode{RunRef: ref, Agent: d.Agent, Status: RunRunning, Depth: d.Depth}
		if d.ParentSessionID != "" {
			p := RunRef{SessionID: d.ParentSessionID, RunID: d.ParentRunID}
			n.Parent, n.ParentToolCallID = &p, d.ParentToolCallID
			t.children[p] = append(t.children[p], ref)
		} else {
			t.roots = append(t.roots, ref)
		}
		if t.nodes[ref] == nil {
			t.order = append(t.order, ref)
		}
		t.nodes[ref] = &treeState{node: n}
	case events.RunWaiting:
		t.status(ref, RunWaiting)
	case events.RunResumed:
		t.status(ref, RunRunning)
	case events.RunCompleted:
		t.status(ref, RunCompleted)
	case events.RunFailed:
		t.status(ref, RunFailed)
	case events.RunCancelled:
		t.status(ref, RunCancelled)
	}
	return nil
}

func (t *Tree) status(ref RunRef, st RunStatus) {
	if n := t.nodes[ref]; n != nil {
		n.node.Status = st
	}
}

// Of returns run ref with its sub-runs nested, and whether the tree has
// it.
func (t *Tree) Of(ref RunRef) (TreeNode, bool) {
	if t.nodes[ref] == nil {
		return TreeNode{}, false
	}
	return t.build(ref, map[RunRef]bool{}), true
}

// build nests the children of ref (seen guards against a cycle, which a
// sound log cannot hold).
func (t *Tree) build(ref RunRef, seen map[RunRef]bool) TreeNode {
	seen[ref] = true
	n := t.nodes[ref].node
	for _, c := range t.children[ref] {
		if t.nodes[c] != nil && !seen[c] {
			n.Children = append(n.Children, t.build(c, seen))
		}
	}
	return n
}

// Root returns the root run above ref (ref itself for a root run).
func (t *Tree) Root(ref RunRef) RunRef {
	for range len(t.nodes) {
		n := t.nodes[ref]
		if n == nil || n.node.Parent == nil || t.nodes[*n.node.Parent] == nil {
			return ref
		}
		ref = *n.node.Parent
	}
	return ref
}

// Session returns the runs of session, in the order they started, each
// with its sub-runs nested.
func (t *Tree) Session(session string) []TreeNode {
	var out []TreeNode
	for _, ref := range t.order {
		if ref.SessionID == session {
			out = append(out, t.build(ref, map[RunRef]bool{}))
		}
	}
	return out
}

// Roots returns every root run's tree, in the order they started.
func (t *Tree) Roots() []TreeNode {
	out := make([]TreeNode, 0, len(t.roots))
	for _, r := range t.roots {
		out = append(out, t.build(r, map[RunRef]bool{}))
	}
	return out
}

// Render writes Roots as a JSON array; sub-runs whose parent is not in
// the log are roots too.
func (t *Tree) Render(w io.Writer) error {
	roots := t.Roots()
	for _, ref := range t.order {
		if p := t.nodes[ref].node.Parent; p != nil && t.nodes[*p] == nil {
			roots = append(roots, t.build(ref, map[RunRef]bool{}))
		}
	}
	return render(w, t.Name(), roots)
}
