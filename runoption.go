package weft

import (
	"context"
	"fmt"
	"maps"

	"github.com/google/uuid"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/toolsets"
)

// RunOption configures one run (Session.Run, Session.RunStream, Agent.Run).
type RunOption func(*runOptions)

type runOptions struct {
	toolsets []toolsets.Toolset
	metadata map[string]any
	deltas   bool
	runID    string
	err      error // the first option that is invalid (WithToolSelection)
}

// runOptionsOf applies opts.
func runOptionsOf(opts []RunOption) runOptions {
	if len(opts) == 0 {
		return runOptions{} // without allocating the options an option writes to
	}
	o := new(runOptions)
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return *o
}

// IncludeDeltas makes RunStream (and Agent.RunStream) also yield the live
// output of a streaming model, as events.TypeModelDelta events, while the
// model writes. Other ways to run ignore it.
func IncludeDeltas() RunOption {
	return func(o *runOptions) { o.deltas = true }
}

// WithRunID gives the run the id id instead of a fresh UUIDv7. A start
// with the id of a run the session already has, of the same agent and
// prompt, is answered as done without starting another (a retried start
// is idempotent); one with another agent or prompt is refused.
func WithRunID(id string) RunOption {
	return func(o *runOptions) { o.runID = id }
}

// newRunID returns the run id of o: WithRunID's, or a fresh UUIDv7.
func (o runOptions) newRunID() string {
	if o.runID != "" {
		return o.runID
	}
	return uuid.Must(uuid.NewV7()).String()
}

// WithToolsets attaches toolsets to this run only, after the agent's. They
// are prepared, refreshed and exited like the agent's (each by its own
// lifecycle driver). They are Go values kept in this process: a run
// recovered after a restart runs without them.
func WithToolsets(tss ...toolsets.Toolset) RunOption {
	return func(o *runOptions) { o.toolsets = append(o.toolsets, tss...) }
}

// WithMetadata sets run metadata (merged over earlier WithMetadata
// options). It must encode as a JSON object; it is recorded in run.started
// and shown to tools (ToolContext.Metadata) and toolsets
// (ToolsetContext.Metadata). Run-start hooks see and may change it.
func WithMetadata(md map[string]any) RunOption {
	return func(o *runOptions) {
		if o.metadata == nil {
			o.metadata = map[string]any{}
		}
		maps.Copy(o.metadata, md)
	}
}

// RunStart is what a run-start hook sees, and may change, before a run
// starts: its identity and prompt (read-only) and its metadata.
type RunStart struct {
	Agent     string
	SessionID string
	RunID     string
	Prompt    string
	// Metadata is the run's metadata; a hook may add, change or delete
	// entries (it is never nil).
	Metadata map[string]any
}

// RunStartHook observes or changes a run before it starts (the seed's
// on_run_start). It runs on the goroutine that started the run; an error
// stops the run from starting and is returned to the caller.
type RunStartHook func(ctx context.Context, rs *RunStart) error

// startCommand applies the run options o and the agent's run-start hooks,
// attaches the run's toolsets, and returns the start command.
func (s *Session) startCommand(ctx context.Context, o runOptions, runID, prompt string) (actors.StartCommand, error) {
	if o.err != nil {
		return actors.StartCommand{}, fmt.Errorf("weft: %w", o.err)
	}
	metadata := o.metadata
	if obs := s.agent.rt.cfg.Observer; len(s.agent.hooks) > 0 || obs != nil {
		// Hooks and the observer get a metadata map to write to.
		rs := &RunStart{Agent: s.agent.spec.Name, SessionID: s.id, RunID: runID, Prompt: prompt, Metadata: metadata}
		if rs.Metadata == nil {
			rs.Metadata = map[string]any{}
		}
		for _, h := range s.agent.hooks {
			if err := h(ctx, rs); err != nil {
				return actors.StartCommand{}, fmt.Errorf("weft: run-start hook: %w", err)
			}
		}
		if obs != nil {
			obs.RunStarting(ctx, rs.Metadata)
		}
		metadata = rs.Metadata
	}
	for i, ts := range o.toolsets {
		if ts == nil {
			return actors.StartCommand{}, fmt.Errorf("weft: run toolset %d is nil", i)
		}
	}
	s.agent.rt.host.AttachRunToolsets(runID, o.toolsets...)
	cmd := actors.StartCommand{RunID: runID, Agent: s.agent.spec.Name, Prompt: prompt}
	if len(metadata) > 0 {
		cmd.Metadata = metadata
	}
	return cmd, nil
}
