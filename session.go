package weft

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
)

// Session is a conversation of an agent: runs in a session see the
// conversation of the session's earlier runs. One run at a time: starting
// a run while another is running or waiting gives ErrSessionBusy.
type Session struct {
	agent *Agent
	id    string
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Run starts a run of prompt and waits until it settles (completed,
// failed, cancelled or waiting). When ctx ends first, the run is cancelled
// and Run returns ctx's error.
//
// Options attach toolsets and metadata to this run only (WithToolsets,
// WithMetadata). The agent's run-start hooks run first, on the caller's
// goroutine; a hook's error is returned and no run starts.
func (s *Session) Run(ctx context.Context, prompt string, opts ...RunOption) (*Result, error) {
	runID := uuid.Must(uuid.NewV7()).String()
	cmd, err := s.startCommand(ctx, runID, prompt, opts)
	if err != nil {
		return nil, err
	}
	return s.command(ctx, runID, actors.VerbStart, cmd)
}

// Resume decides every pending item of the session's waiting run and
// waits until the run settles again. An unknown id, a duplicate or missing
// decision, or one that does not fit its item is refused with a typed
// error (ErrUnknownDecision, ErrDuplicateDecision, ErrMissingDecisions,
// ErrWrongDecision) and nothing runs.
func (s *Session) Resume(ctx context.Context, decisions ...Decision) (*Result, error) {
	st, err := s.agent.rt.host.ReadSession(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("weft: resume: %w", err)
	}
	r := st.ActiveRun()
	if r == nil || r.Status != actors.StatusWaiting {
		return nil, fmt.Errorf("weft: resume session %q: %w", s.id, ErrNotWaiting)
	}
	return s.command(ctx, r.ID, actors.VerbResume, actors.ResumeCommand{RunID: r.ID, Decisions: decisions})
}

// Cancel cancels run runID (the active run when runID is empty): running
// tools are cancelled cooperatively, every open call is closed with a
// cancelled return, and the run ends as cancelled.
func (s *Session) Cancel(ctx context.Context, runID, by, reason string) error {
	_, err := s.agent.rt.host.Command(ctx, s.id, actors.VerbCancel, actors.CancelCommand{RunID: runID, By: by, Reason: reason})
	if err != nil {
		return fmt.Errorf("weft: %w", err)
	}
	return nil
}

// Wait returns the outcome of run runID once it has settled (for runs
// started before a restart, say).
func (s *Session) Wait(ctx context.Context, runID string) (*Result, error) {
	ch, stop := s.agent.rt.host.Watch(runID)
	defer stop()
	st, err := s.agent.rt.host.ReadSession(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("weft: wait: %w", err)
	}
	if o, ok := st.Outcome(runID); !ok {
		return nil, fmt.Errorf("weft: wait for run %q: %w", runID, ErrUnknownRun)
	} else if o.Status.Settled() {
		return finish(o)
	}
	select {
	case o := <-ch:
		return finish(o)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// State returns the session's state, folded from its events.
func (s *Session) State(ctx context.Context) (*actors.SessionState, error) {
	return s.agent.rt.host.ReadSession(ctx, s.id)
}

func finish(o actors.Outcome) (*Result, error) {
	res := resultOf(o)
	if res.Status == StatusFailed && res.Err != nil {
		return res, res.Err
	}
	return res, nil
}

// command sends a start or resume command and waits for the run to settle.
func (s *Session) command(ctx context.Context, runID, verb string, body any) (*Result, error) {
	host := s.agent.rt.host
	ch, stop := host.Watch(runID)
	defer stop()
	if _, err := host.Command(ctx, s.id, verb, body); err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	select {
	case o := <-ch:
		return finish(o)
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		defer cancel()
		_, _ = host.Command(cctx, s.id, actors.VerbCancel, actors.CancelCommand{RunID: runID, Reason: "the caller's context ended"})
		return nil, ctx.Err()
	}
}

// RunStream starts a run of prompt and yields its events as they are
// recorded (from the session's NATS event subjects), ending after the event
// that settles the run (run.completed, run.failed, run.cancelled or
// run.waiting). Breaking out of the loop stops watching; the run goes on.
func (s *Session) RunStream(ctx context.Context, prompt string, opts ...RunOption) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		rt := s.agent.rt
		filter, err := rt.subj.StreamEvents(events.SessionStream(s.id))
		if err != nil {
			yield(events.Event{}, err)
			return
		}
		msgs := make(chan *nats.Msg, 1024)
		sub, err := rt.conn.ChanSubscribe(filter, msgs)
		if err != nil {
			yield(events.Event{}, fmt.Errorf("weft: subscribe: %w", err))
			return
		}
		defer func() { _ = sub.Unsubscribe() }()
		if err := rt.conn.Flush(); err != nil {
			yield(events.Event{}, err)
			return
		}
		runID := uuid.Must(uuid.NewV7()).String()
		cmd, err := s.startCommand(ctx, runID, prompt, opts)
		if err != nil {
			yield(events.Event{}, err)
			return
		}
		if _, err := rt.host.Command(ctx, s.id, actors.VerbStart, cmd); err != nil {
			yield(events.Event{}, fmt.Errorf("weft: %w", err))
			return
		}
		for {
			select {
			case <-ctx.Done():
				yield(events.Event{}, ctx.Err())
				return
			case m := <-msgs:
				var ev events.Event
				if err := json.Unmarshal(m.Data, &ev); err != nil {
					if !yield(events.Event{}, fmt.Errorf("weft: decode event: %w", err)) {
						return
					}
					continue
				}
				if ev.RunID != runID {
					continue
				}
				if !yield(ev, nil) {
					return
				}
				switch ev.Type {
				case events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled, events.TypeRunWaiting:
					return
				}
			}
		}
	}
}

// cancelTimeout bounds the cancel command Run sends when its ctx ends.
const cancelTimeout = 10 * time.Second
