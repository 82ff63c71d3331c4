package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/weft-run/weft/projections"
)

// sessionRow is one line of weft sessions.
type sessionRow = projections.SessionSummary

// runSessions lists the sessions of the log.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sessions", "[--nats URL | --data DIR] [--json]", `
Lists the sessions in the event log: id, agent, runs, the last run's status
and how many items wait for a decision. A session whose stream holds poison
(a message that is not a weft event, an event that does not decode) is
listed as damaged, with the poison's position and why.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	if err := parseNoArgs(fs, src, args, output.check); err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		archive := projections.NewArchive()
		if _, err := s.build(ctx, archive); err != nil {
			return err
		}
		rows, err := archive.Summaries()
		if err != nil {
			return err
		}
		if output.json() {
			return output.write(stdout, rows)
		}
		if len(rows) == 0 {
			fmt.Fprintf(stdout, "no sessions in the log at %s\n", s.where)
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tAGENT\tRUNS\tLAST STATUS\tPENDING\tEVENTS\tUPDATED")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", r.SessionID, dash(r.Agent), r.Runs, dash(string(r.LastStatus)), r.Pending, r.Events, r.Updated.Format(time.RFC3339))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range rows {
			for _, p := range r.Damaged {
				fmt.Fprintf(stdout, "DAMAGED %s: %v\n", r.SessionID, p)
			}
		}
		return nil
	})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
