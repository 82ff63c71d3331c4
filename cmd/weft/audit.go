package main

import (
	"context"
	"io"

	"github.com/weft-run/weft/projections"
)

// auditSubcommands are the words weft audit takes in place of a session id.
var auditSubcommands = map[string]command{
	"verify":     {"check the keyed hash chain of the log (and an anchor checkpoint) and report the first broken event", runAuditVerify},
	"checkpoint": {"verify the log and write a signed checkpoint of its stream heads: the anchor kept outside the log", runAuditCheckpoint},
	"rotate-key": {"add a new current chain key to a keyring, keeping the old ones to verify older events", runAuditRotateKey},
}

// runAudit prints a session's audit timeline.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if sub, ok := auditSubcommands[args[0]]; ok {
			return sub.run(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlagSet("audit", "SESSION [--nats URL | --data DIR] [--json]", `
Prints the audit timeline of a session: one line per event with its time,
type, tool call, tool and outcome.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	id, err := parseSessionArgs(fs, src, args, output.check)
	if err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		audit := projections.NewAudit()
		if _, err := s.build(ctx, audit); err != nil {
			return err
		}
		id, err := resolveID("session", id, audit.Sessions())
		if err != nil {
			return err
		}
		lines, err := audit.Timeline(id)
		if err != nil {
			return unknownSession(id, err)
		}
		if output.json() {
			return output.write(stdout, lines)
		}
		return audit.WriteText(stdout, id)
	})
}
