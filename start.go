package weft

import (
	"context"
	"fmt"

	"github.com/weft-run/weft/actors"
)

// Start starts a run of prompt and returns its id once the session has
// recorded its start, without waiting for it to settle: follow it with
// Wait, Status or the session's events. Unlike Run, nothing cancels the
// run when ctx ends after Start returned. With WithRunID, a retried Start
// of the same agent and prompt returns the same run and starts no other.
// Options and run-start hooks are Run's.
func (s *Session) Start(ctx context.Context, prompt string, opts ...RunOption) (string, error) {
	o := runOptionsOf(opts)
	runID := o.newRunID()
	cmd, err := s.startCommand(ctx, o, runID, prompt)
	if err != nil {
		return "", err
	}
	if _, err := s.send(ctx, actors.VerbStart, cmd); err != nil {
		return "", fmt.Errorf("weft: %w", err)
	}
	return runID, nil
}

// Decide sends decisions as Resume does, and returns the id of the
// resumed run once the session has recorded them, without waiting for the
// run to settle again (follow it with Wait). A refused decision returns
// Resume's typed errors.
func (s *Session) Decide(ctx context.Context, decisions ...Decision) (string, error) {
	cmd, err := s.resumeCommand(ctx, decisions)
	if err != nil {
		return "", err
	}
	if _, err := s.agent.rt.host.Command(ctx, s.id, actors.VerbResume, cmd); err != nil {
		return "", fmt.Errorf("weft: %w", err)
	}
	return cmd.RunID, nil
}
