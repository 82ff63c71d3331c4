package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
	"github.com/weft-run/weft/replay"
)

// errDiverged marks a replay that did not reproduce its recording (exit 1).
var errDiverged = errors.New("replay diverged from the recording")

// replayCheckReport is the --json output of replay-check.
type replayCheckReport struct {
	SessionID  string             `json:"session_id"`
	Events     int                `json:"events"`
	OK         bool               `json:"ok"`
	Divergence *replay.Divergence `json:"divergence,omitempty"`
}

// runReplayCheck re-runs a recorded session against its recorded model
// responses and tool returns and compares the event sequences.
func runReplayCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay-check", "SESSION [--nats URL | --data DIR] [--json]", `
Re-runs a recorded session on a fresh in-memory runtime, answering the model
from its recorded model.response events and each tool call from its recorded
return, replaying its approvals and deferred results, and compares the new
event sequence with the recorded one (package replay says exactly what is
compared). Prints the first diverging event and exits with status 1 when
they differ.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	id, err := parseSessionArgs(fs, src, args, output.check)
	if err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		recorded, err := s.store.ReadStream(ctx, events.SessionStream(id), 0)
		if errors.Is(err, events.ErrStreamNotFound) && len(id) >= minPrefix {
			// Perhaps a short id: find the session it begins.
			archive := projections.NewArchive()
			if _, berr := s.build(ctx, archive); berr != nil {
				return berr
			}
			full, rerr := resolveID("session", id, archive.Sessions())
			if rerr != nil {
				return rerr
			}
			if full != id {
				id = full
				recorded, err = s.store.ReadStream(ctx, events.SessionStream(id), 0)
			}
		}
		if errors.Is(err, events.ErrStreamNotFound) {
			return unknownSession(id, projections.ErrUnknownSession)
		}
		if err != nil {
			return fmt.Errorf("read session %q at %s: %w", id, s.where, err)
		}
		rep := replayCheckReport{SessionID: id, Events: len(recorded)}
		err = replay.Check(ctx, recorded)
		var d *replay.Divergence
		switch {
		case errors.As(err, &d):
			rep.Divergence = d
		case err != nil:
			return fmt.Errorf("replay session %q: %w", id, err)
		default:
			rep.OK = true
		}
		if output.json() {
			if err := output.write(stdout, rep); err != nil {
				return err
			}
		} else if rep.OK {
			fmt.Fprintf(stdout, "replay matches the recording: %d events of session %s\n", rep.Events, id)
		} else {
			fmt.Fprintf(stdout, "replay DIVERGES at version %d:\n  expected: %s %s\n  got:      %s %s\n",
				d.Version, dash(string(d.ExpectedType)), d.Expected, dash(string(d.GotType)), d.Got)
		}
		if d != nil {
			return fmt.Errorf("session %q: %w: %w", id, errDiverged, d)
		}
		return nil
	})
}
