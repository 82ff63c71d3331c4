package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/weft-run/weft/projections"
)

// runShow prints a session's archive.
func runShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("show", "SESSION [--nats URL | --data DIR] [--json]", `
Shows the archive of a session: its runs with their statuses, outputs and
usage, what it waits for, its toolsets and its messages.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	messages := fs.Bool("messages", false, "print every message in full (text output)")
	id, err := parseSessionArgs(fs, src, args, output.check)
	if err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		archive, tree := projections.NewArchive(), projections.NewTree()
		if _, err := s.build(ctx, archive, tree); err != nil {
			return err
		}
		id, err := resolveID("session", id, archive.Sessions())
		if err != nil {
			return err
		}
		a, err := archive.Session(id)
		if err != nil {
			return unknownSession(id, err)
		}
		if output.json() {
			return output.write(stdout, a)
		}
		printArchive(stdout, a, *messages)
		printTree(stdout, tree.Session(id))
		return nil
	})
}

// unknownSession explains an ErrUnknownSession.
func unknownSession(id string, err error) error {
	if errors.Is(err, projections.ErrUnknownSession) {
		return fmt.Errorf("session %q: %w (weft sessions lists them)", id, projections.ErrUnknownSession)
	}
	return err
}

func printArchive(w io.Writer, a projections.SessionArchive, full bool) {
	fmt.Fprintf(w, "session %s (stream %s), %d events, updated %s\n", a.SessionID, a.Stream, a.Events, a.Updated.Format(time.RFC3339Nano))
	fmt.Fprintf(w, "usage: %s\n", formatUsage(a.Usage))
	fmt.Fprintf(w, "\nruns (%d):\n", len(a.Runs))
	for _, r := range a.Runs {
		fmt.Fprintf(w, "  %s  agent=%s  status=%s  model_requests=%d  tool_calls=%d\n", r.RunID, dash(r.Agent), r.Status, r.ModelRequests, r.ToolCalls)
		if len(r.Input) > 0 {
			fmt.Fprintf(w, "    input:  %s\n", jsonText(r.Input))
		}
		if len(r.Output) > 0 {
			fmt.Fprintf(w, "    output: %s\n", jsonText(r.Output))
		}
		if r.Error != nil {
			fmt.Fprintf(w, "    error:  %s: %s\n", r.Error.Kind, r.Error.Message)
		}
		if r.Cancel != nil {
			fmt.Fprintf(w, "    cancelled by %s: %s\n", dash(r.Cancel.By), r.Cancel.Reason)
		}
		fmt.Fprintf(w, "    usage:  %s\n", formatUsage(r.Usage))
	}
	fmt.Fprintf(w, "\npending (%d):\n", len(a.Pending))
	for _, p := range a.Pending {
		fmt.Fprintf(w, "  %s %s: %s %s", p.Kind, p.ToolCallID, p.Tool, compact(p.Arguments))
		if p.Reason != "" {
			fmt.Fprintf(w, " (%s)", p.Reason)
		}
		fmt.Fprintf(w, "  run=%s\n", p.RunID)
	}
	if len(a.Toolsets) > 0 {
		fmt.Fprintf(w, "\ntoolsets (%d):\n", len(a.Toolsets))
		for _, t := range a.Toolsets {
			fmt.Fprintf(w, "  %s  %s  tools=%s\n", t.Name, t.Status, strings.Join(t.Tools, ","))
		}
	}
	if len(a.LoadedTools) > 0 {
		fmt.Fprintf(w, "\nloaded tools: %s\n", strings.Join(a.LoadedTools, ", "))
	}
	fmt.Fprintf(w, "\nmessages (%d):\n", len(a.Messages))
	for i, m := range a.Messages {
		line := compact(m)
		if !full && len(line) > 160 {
			line = line[:157] + "..."
		}
		fmt.Fprintf(w, "  %2d %s\n", i+1, line)
	}
}

// jsonText prints a JSON string as its text, other JSON compacted.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return compact(raw)
}
