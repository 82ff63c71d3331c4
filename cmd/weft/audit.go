package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weft-run/weft/projections"
)

// auditSubcommands are the words weft audit takes in place of a session id.
// "verify" (recompute the hash chain of the log's events and report the first
// altered, missing or reordered event) belongs here once events carry the
// hash of their predecessor; it is not part of this build.
var auditSubcommands = map[string]command{}

// runAudit prints a session's audit timeline.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if sub, ok := auditSubcommands[args[0]]; ok {
			return sub.run(ctx, args[1:], stdout, stderr)
		}
		if args[0] == "verify" {
			return fmt.Errorf("%w: audit verify is not available yet: the log's events carry no hash chain to verify", errUsage)
		}
	}
	fs := newFlagSet("audit", "SESSION [--nats URL | --data DIR] [--json]", `
Prints the audit timeline of a session: one line per event with its time,
type, tool call, tool and outcome.`, stderr)
	src := addSourceFlags(fs, true)
	asJSON := fs.Bool("json", false, "print the timeline as a JSON array")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(fs, "needs exactly one SESSION id, got %q", pos)
	}
	if err := src.check(); err != nil {
		return err
	}
	id := pos[0]
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		audit := projections.NewAudit()
		if _, err := s.build(ctx, audit); err != nil {
			return err
		}
		lines, err := audit.Timeline(id)
		if err != nil {
			return unknownSession(id, err)
		}
		if *asJSON {
			return writeJSON(stdout, lines)
		}
		return audit.WriteText(stdout, id)
	})
}
