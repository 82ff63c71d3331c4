package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/weft-run/weft/projections"
)

// printTree prints the sub-runs of a session's runs (agents called as
// tools), and the parent of a run that is itself a sub-run; nothing for
// a session without either.
func printTree(w io.Writer, runs []projections.TreeNode) {
	var any bool
	for _, r := range runs {
		any = any || r.Parent != nil || len(r.Children) > 0
	}
	if !any {
		return
	}
	fmt.Fprintf(w, "\nrun tree:\n")
	for _, r := range runs {
		if r.Parent != nil {
			fmt.Fprintf(w, "  %s is a sub-run of session %s run %s (call %s)\n", r.RunID, r.Parent.SessionID, r.Parent.RunID, r.ParentToolCallID)
		}
		printNode(w, r, 1)
	}
}

func printNode(w io.Writer, n projections.TreeNode, depth int) {
	indent := strings.Repeat("  ", depth)
	fmt.Fprintf(w, "%s%s  agent=%s  status=%s  session=%s\n", indent, n.RunID, dash(n.Agent), n.Status, n.SessionID)
	for _, c := range n.Children {
		fmt.Fprintf(w, "%s  └ call %s:\n", indent, c.ParentToolCallID)
		printNode(w, c, depth+2)
	}
}
