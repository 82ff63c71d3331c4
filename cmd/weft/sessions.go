package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/weft-run/weft/projections"
)

// sessionRow is one line of weft sessions.
type sessionRow = projections.SessionSummary

// runStatuses are the statuses --status takes.
var runStatuses = []projections.RunStatus{projections.RunRunning, projections.RunWaiting, projections.RunCompleted, projections.RunFailed, projections.RunCancelled}

// runSessions lists the sessions of the log.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sessions", "[--status STATUS] [--agent AGENT] [--nats URL | --data DIR] [-o json|jsonl]", `
Lists the sessions in the event log: id, agent, runs, the last run's status
and how many items wait for a decision. A session whose stream holds poison
(a message that is not a weft event, an event that does not decode) is
listed as damaged, with the poison's position and why.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	status := fs.String("status", "", "only the sessions whose last run has `STATUS`: running, waiting, completed, failed or cancelled")
	agent := fs.String("agent", "", "only the sessions of `AGENT`")
	checkStatus := func() error {
		if *status != "" && !slices.Contains(runStatuses, projections.RunStatus(*status)) {
			return usageError(fs, "--status is running, waiting, completed, failed or cancelled, got %q", *status)
		}
		return nil
	}
	if err := parseNoArgs(fs, src, args, output.check, checkStatus); err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		archive := projections.NewArchive()
		if _, err := s.build(ctx, archive); err != nil {
			return err
		}
		all, err := archive.Summaries()
		if err != nil {
			return err
		}
		rows := make([]sessionRow, 0, len(all))
		for _, r := range all {
			if (*status == "" || string(r.LastStatus) == *status) && (*agent == "" || r.Agent == *agent) {
				rows = append(rows, r)
			}
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
