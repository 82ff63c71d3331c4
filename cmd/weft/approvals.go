package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/weft-run/weft/projections"
)

// runApprovals prints the HITL queue.
func runApprovals(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("approvals", "[--nats URL | --data DIR] [--json]", `
Lists every pending approval, deferred call and elicitation (a tool's
question to a person) across all sessions (the HITL queue), oldest first, with
its age, tool, arguments and reason (an elicitation's question, and the schema
its answer must fit). Decide them with weft approve, deny, complete, fail or
answer.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	if err := parseNoArgs(fs, src, args, output.check); err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		queue := projections.NewQueue()
		if _, err := s.build(ctx, queue); err != nil {
			return err
		}
		items := queue.Items()
		if output.json() {
			if items == nil {
				items = []projections.QueueItem{}
			}
			return output.write(stdout, items)
		}
		if len(items) == 0 {
			fmt.Fprintln(stdout, "nothing pending")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tSESSION\tRUN\tTOOL\tAGE\tARGUMENTS\tREASON")
		for _, it := range items {
			reason := it.Reason
			if it.Kind == projections.PendingElicitation {
				reason = it.Message + " (answer fitting " + compact(it.Schema) + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.ToolCallID, it.Kind, it.SessionID, it.RunID, it.Tool, it.Age, compact(it.Arguments), dash(reason))
		}
		return tw.Flush()
	})
}
