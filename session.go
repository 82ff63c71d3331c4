package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
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
	// fresh: the id was made by NewSession and no start was sent yet, so
	// the session has no events (see actors.Host.StartNew).
	fresh atomic.Bool
}

// send sends command verb with body to the session. The session's first
// start, when NewSession made it, goes as a start of a session with no
// events (actors.Host.StartNew).
func (s *Session) send(ctx context.Context, verb string, body any) (actors.CommandReply, error) {
	host := s.agent.rt.host
	if cmd, ok := body.(actors.StartCommand); ok && verb == actors.VerbStart && s.fresh.Swap(false) {
		return host.StartNew(ctx, s.id, cmd)
	}
	return host.Command(ctx, s.id, verb, body)
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Run starts a run of prompt and waits until it settles (completed,
// failed, cancelled or waiting), whichever node of a cluster drives it
// (the session's owner, see Config.LeaseTTL). When ctx ends first, the run
// is cancelled and Run returns ctx's error.
//
// Options attach toolsets and metadata to this run only (WithToolsets,
// WithMetadata). The agent's run-start hooks run first, on the caller's
// goroutine; a hook's error is returned and no run starts.
func (s *Session) Run(ctx context.Context, prompt string, opts ...RunOption) (*Result, error) {
	o := runOptionsOf(opts)
	runID := o.newRunID()
	cmd, err := s.startCommand(ctx, o, runID, prompt)
	if err != nil {
		return nil, err
	}
	return s.command(ctx, runID, actors.VerbStart, cmd)
}

// Resume decides every pending item of the session's waiting run and
// waits until the run settles again. An unknown id (a call of another
// session included), a duplicate or missing decision, a decision on an
// item already decided, or one that does not fit its item (reviewed
// arguments that fail the tool's parameters schema included) is refused
// with a typed error (ErrUnknownDecision, ErrDuplicateDecision,
// ErrAlreadyDecided, ErrMissingDecisions, ErrWrongDecision), nothing runs,
// and the session records the refusal (decision.refused: who, what, why);
// a decision whose result or details did not encode as JSON (Complete,
// FailWith) is refused with ErrWrongDecision before it is sent, and a
// session with no waiting run with ErrNotWaiting: those never reach the
// session and are not recorded.
func (s *Session) Resume(ctx context.Context, decisions ...Decision) (*Result, error) {
	cmd, err := s.resumeCommand(ctx, decisions)
	if err != nil {
		return nil, err
	}
	return s.command(ctx, cmd.RunID, actors.VerbResume, cmd)
}

// resumeCommand returns the resume command of decisions for the session's
// waiting run, or the error that refuses them before they are sent.
func (s *Session) resumeCommand(ctx context.Context, decisions []Decision) (actors.ResumeCommand, error) {
	st, err := s.agent.rt.host.ReadSession(ctx, s.id)
	if err != nil {
		return actors.ResumeCommand{}, fmt.Errorf("weft: resume: %w", err)
	}
	r := st.ActiveRun()
	if r == nil || r.Status != actors.StatusWaiting {
		return actors.ResumeCommand{}, fmt.Errorf("weft: resume session %q: %w", s.id, ErrNotWaiting)
	}
	cmd := actors.ResumeCommand{RunID: r.ID, Decisions: make([]actors.Decision, len(decisions))}
	for i, d := range decisions {
		if err := d.check(); err != nil {
			// It cannot travel as JSON: refused here, before the command.
			return actors.ResumeCommand{}, fmt.Errorf("weft: resume session %q: %w", s.id, err)
		}
		cmd.Decisions[i] = d.command()
	}
	if sub := s.agent.rt.sub.Load(); sub != nil {
		// The sub-runs the run also waits for: their ends, when they
		// have ended, complete the resume (subrun.go).
		ds, _ := sub.endedDecisions(ctx, s.id, r, cmd.Decisions)
		cmd.Decisions = append(cmd.Decisions, ds...)
	}
	return cmd, nil
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
// started before a restart, say), whichever node of a cluster drives it.
func (s *Session) Wait(ctx context.Context, runID string) (*Result, error) {
	ch, stop := s.agent.rt.host.Watch(runID)
	defer stop()
	settled, unsubscribe, err := s.settlements(runID)
	if err != nil {
		return nil, err
	}
	defer unsubscribe()
	st, err := s.agent.rt.host.ReadSession(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("weft: wait: %w", err)
	}
	if o, ok := st.Outcome(runID); !ok {
		return nil, fmt.Errorf("weft: wait for run %q: %w", runID, ErrUnknownRun)
	} else if o.Status.Settled() {
		return finish(o)
	}
	for {
		select {
		case o := <-ch:
			return finish(o)
		case v := <-settled:
			if s.agent.rt.host.Drives(s.id) {
				settled = nil // this node drives the run: see command
				continue
			}
			o, err := s.outcomeAt(ctx, runID, v)
			if err != nil {
				return nil, err
			}
			return finish(o)
		case <-s.agent.rt.host.Done():
			return nil, fmt.Errorf("weft: wait for run %q: %w", runID, ErrClosed)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// finish is the result of outcome o, a watcher's or the log's: a run
// whose session's actor stopped without settling it (o.Lost) has none,
// its error matches ErrUnavailable.
func finish(o actors.Outcome) (*Result, error) {
	if o.Lost != nil {
		return nil, fmt.Errorf("weft: run %q: %w", o.RunID, o.Lost)
	}
	res := resultOf(o)
	if res.Status == StatusFailed && res.Err != nil {
		return res, res.Err
	}
	return res, nil
}

// command sends a start or resume command and waits for the run to settle,
// wherever it is driven: the local host's watcher hears a run this node
// drives (the fast path), the session's event subjects an event that
// settles it on any node of a cluster (the command forwarded to the
// session's owner).
func (s *Session) command(ctx context.Context, runID, verb string, body any) (*Result, error) {
	host := s.agent.rt.host
	ch, stop := host.Watch(runID)
	defer stop()
	settled, unsubscribe, err := s.settlements(runID)
	if err != nil {
		return nil, err
	}
	defer unsubscribe()
	if _, err = s.send(ctx, verb, body); err != nil {
		if ctx.Err() != nil {
			// ctx ended while the command was on its way: the session may
			// have acted on it (started or resumed the run) with nobody
			// left to wait for the run. Cancel it as below.
			s.cancelAfter(ctx, runID)
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("weft: %w", err)
	}
	for {
		select {
		case o := <-ch:
			return finish(o)
		case v := <-settled:
			if host.Drives(s.id) {
				// This node drives the run: its watcher hears the
				// outcome once the run's toolsets have exited.
				settled = nil
				continue
			}
			o, err := s.outcomeAt(ctx, runID, v)
			if err != nil {
				// The run has settled: there is nothing to cancel.
				return nil, err
			}
			return finish(o)
		case <-host.Done():
			return nil, fmt.Errorf("weft: run %q: %w", runID, ErrClosed)
		case <-ctx.Done():
			s.cancelAfter(ctx, runID)
			return nil, ctx.Err()
		}
	}
}

// settleTypes are the types of the events that settle a run.
var settleTypes = []events.Type{events.TypeRunWaiting, events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled}

// settlements subscribes to the session's event subjects and returns a
// channel that receives the version of each event settling run runID, and
// a function that ends the subscription; without leases (one node) the
// channel is nil and nothing is subscribed. Subscribe before sending the
// command: the subscription and the command share the connection, so the
// server registers the one before it routes the other.
func (s *Session) settlements(runID string) (<-chan uint64, func(), error) {
	rt := s.agent.rt
	if rt.leases == nil {
		// One node: this host drives every session, its watcher hears
		// every run.
		return nil, func() {}, nil
	}
	stream := events.SessionStream(s.id)
	filter, err := rt.subj.StreamEvents(stream)
	if err != nil {
		return nil, nil, fmt.Errorf("weft: %w", err)
	}
	settling := make(map[string]bool, len(settleTypes))
	for _, typ := range settleTypes {
		subject, err := rt.subj.Event(stream, string(typ))
		if err != nil {
			return nil, nil, fmt.Errorf("weft: %w", err)
		}
		settling[subject] = true
	}
	ch := make(chan uint64, 4)
	sub, err := rt.conn.Subscribe(filter, func(m *nats.Msg) {
		if !settling[m.Subject] {
			return
		}
		var ev events.Event
		if json.Unmarshal(m.Data, &ev) != nil || ev.RunID != runID || ev.Version == 0 {
			return
		}
		select {
		case ch <- ev.Version:
		default: // the caller reads the first one only
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("weft: subscribe: %w", err)
	}
	return ch, func() { _ = sub.Unsubscribe() }, nil
}

// outcomeAt returns the outcome of run runID as the session stood at
// version, the version of an event that settled the run. NATS hands an
// event to its subscribers and to the stream that stores it independently,
// so the read may not show it yet: outcomeAt reads again, after 1 ms and
// then doubling up to 100 ms, until it does or ctx ends.
func (s *Session) outcomeAt(ctx context.Context, runID string, version uint64) (actors.Outcome, error) {
	var verdict error // the read's own failure, final
	fail := func(err error) (actors.Outcome, error) {
		verdict = err
		return actors.Outcome{}, backoff.Permanent(err)
	}
	read := func() (actors.Outcome, error) {
		evs, err := s.agent.rt.store.ReadStream(ctx, events.SessionStream(s.id), 0)
		if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
			return fail(fmt.Errorf("weft: read session %q: %w", s.id, err))
		}
		if n := len(evs); n == 0 || evs[n-1].Version < version {
			return actors.Outcome{}, errNotStoredYet
		}
		st := actors.NewSessionState(s.id)
		for _, ev := range evs {
			if ev.Version > version {
				break
			}
			if err := st.Apply(ev); err != nil {
				return fail(fmt.Errorf("weft: read session %q: %w", s.id, err))
			}
		}
		if o, ok := st.Outcome(runID); ok && o.Status.Settled() {
			return o, nil
		}
		return fail(fmt.Errorf("weft: run %q is not settled at version %d of session %q: %w", runID, version, s.id, ErrUnknownRun))
	}
	o, err := backoff.Retry(ctx, read, backoff.WithMaxElapsedTime(0), backoff.WithBackOff(&backoff.ExponentialBackOff{
		InitialInterval: time.Millisecond, Multiplier: 2, MaxInterval: 100 * time.Millisecond}))
	switch {
	case err == nil:
		return o, nil
	case verdict != nil:
		return actors.Outcome{}, verdict
	case ctx.Err() != nil:
		return actors.Outcome{}, ctx.Err() // ctx ended before a read showed the event
	default:
		return actors.Outcome{}, err
	}
}

// errNotStoredYet is outcomeAt's answer to a read that does not show the
// settling event yet: read again.
var errNotStoredYet = errors.New("weft: the settling event is not stored yet")

// RunStream starts a run of prompt and yields its events as they are
// recorded (from the session's NATS event subjects), ending after the event
// that settles the run (run.completed, run.failed, run.cancelled or
// run.waiting). Breaking out of the loop stops watching; the run goes on.
// The events are the live copies, their private surfaces redacted (see
// events.Redact; Event.Redacted says what was removed); Events reads them
// whole from the log.
//
// With the run option IncludeDeltas, it also yields what a streaming model
// writes while it writes: events of type events.TypeModelDelta (data
// events.ModelDelta), which are never recorded and come before the
// model.response that holds the whole answer. Deltas are best effort (a
// gap in ModelDelta.Seq means some were dropped); the events are not.
func (s *Session) RunStream(ctx context.Context, prompt string, opts ...RunOption) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		rt := s.agent.rt
		stream := events.SessionStream(s.id)
		filters := make([]string, 0, 2)
		filter, err := rt.subj.StreamEvents(stream)
		if err != nil {
			yield(events.Event{}, err)
			return
		}
		filters = append(filters, filter)
		if runOptionsOf(opts).deltas {
			filter, err := rt.subj.Delta(stream)
			if err != nil {
				yield(events.Event{}, err)
				return
			}
			filters = append(filters, filter)
		}
		msgs := make(chan *nats.Msg, 1024)
		for _, filter := range filters {
			sub, err := rt.conn.ChanSubscribe(filter, msgs)
			if err != nil {
				yield(events.Event{}, fmt.Errorf("weft: subscribe: %w", err))
				return
			}
			defer func() { _ = sub.Unsubscribe() }()
		}
		if err := rt.conn.Flush(); err != nil {
			yield(events.Event{}, err)
			return
		}
		o := runOptionsOf(opts)
		runID := o.newRunID()
		cmd, err := s.startCommand(ctx, o, runID, prompt)
		if err != nil {
			yield(events.Event{}, err)
			return
		}
		if _, err := s.send(ctx, actors.VerbStart, cmd); err != nil {
			yield(events.Event{}, fmt.Errorf("weft: %w", err))
			return
		}
		for {
			select {
			case <-ctx.Done():
				yield(events.Event{}, ctx.Err())
				return
			case <-rt.host.Done():
				yield(events.Event{}, fmt.Errorf("weft: run %q: %w", runID, ErrClosed))
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
				// Live events carry large data by reference, as stored.
				blobs, _ := rt.store.(events.BlobStore)
				if err := events.ResolveBlob(ctx, blobs, &ev); err != nil {
					if !yield(events.Event{}, fmt.Errorf("weft: %w", err)) {
						return
					}
				} else if !yield(ev, nil) {
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

// cancelAfter cancels run runID after the caller's ctx ended, waiting up
// to cancelTimeout for the session to take the cancel. A run that has
// settled already, or that the session never started (the command did not
// reach it), answers with an error, which is nothing to act on.
func (s *Session) cancelAfter(ctx context.Context, runID string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if l := s.agent.rt.cfg.Logger; l != nil {
		l.Info("cancelling the run: its caller's context ended", "session", s.id, "run", runID)
	}
	_, _ = s.agent.rt.host.Command(cctx, s.id, actors.VerbCancel, actors.CancelCommand{RunID: runID, Reason: "the caller's context ended"})
}

// cancelTimeout bounds the cancel command Run sends when its ctx ends.
const cancelTimeout = 10 * time.Second
