package projections

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/weft-run/weft/events"
)

// Log is what a Runner reads: the events.Store's Reader and Subscriber
// roles.
type Log interface {
	events.Reader
	events.Subscriber
}

// Progress reports how far a Runner got; see WithProgress.
type Progress struct {
	// Read counts the events read from the log in this pass; Applied
	// counts the (event, projection) pairs that were folded (an event a
	// projection had already seen is read but not applied to it).
	Read    uint64 `json:"read"`
	Applied uint64 `json:"applied"`
	// Position is the Position of the last event read.
	Position uint64 `json:"position"`
	// Live is true once the runner follows new events (Follow), false
	// while it catches up.
	Live bool `json:"live"`
}

// RunnerOption configures NewRunner.
type RunnerOption func(*Runner)

// WithProgress calls fn every every events read (every <= 0: 10,000),
// once more at the end of a catch-up, and at each live event. fn runs on
// the Runner's goroutine and must not block for long.
func WithProgress(fn func(Progress), every int) RunnerOption {
	return func(r *Runner) {
		r.progress = fn
		if every <= 0 {
			every = 10_000
		}
		r.every = uint64(every)
	}
}

// Runner keeps projections up to date with a log: CatchUp reads from the
// lowest checkpoint to the end, Follow then stays live, Rebuild starts
// over from position 0. A Runner is not safe for concurrent use; the
// projections must not be applied to by anyone else while it runs.
type Runner struct {
	log      Log
	projs    []Projection
	progress func(Progress)
	every    uint64
	// poison holds what the runner quarantined, by position.
	poison []*events.PoisonError
}

// NewRunner returns a runner of projs over log.
func NewRunner(log Log, projs []Projection, opts ...RunnerOption) *Runner {
	r := &Runner{log: log, projs: projs}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Checkpoint is the lowest checkpoint of the runner's projections: where
// the next catch-up starts reading.
func (r *Runner) Checkpoint() uint64 {
	if len(r.projs) == 0 {
		return 0
	}
	low := r.projs[0].Checkpoint()
	for _, p := range r.projs[1:] {
		low = min(low, p.Checkpoint())
	}
	return low
}

// CatchUp applies every event after the lowest checkpoint, up to the end
// of the log as it is when the read reaches it, and returns the counts.
// It blocks until then or until ctx is done. Poison (a stored message that
// is not a weft event, an event that does not decode, one a projection
// refuses) is quarantined, not fatal: see Poison. Errors: ErrNoProjections;
// an *Error for a read failure (the projections keep what they applied
// before it, and their checkpoints say where).
func (r *Runner) CatchUp(ctx context.Context) (Progress, error) {
	if len(r.projs) == 0 {
		return Progress{}, &Error{Op: "catch up", Err: ErrNoProjections}
	}
	var pr Progress
	err := r.consume(&pr, r.log.ReadAll(ctx, r.Checkpoint()), "read")
	if err == nil {
		err = ctx.Err()
	}
	r.report(pr)
	return pr, err
}

// Rebuild resets every projection and replays the log from position 0.
func (r *Runner) Rebuild(ctx context.Context) (Progress, error) {
	for _, p := range r.projs {
		p.Reset()
	}
	return r.CatchUp(ctx)
}

// Follow catches up, then applies each new event as it is appended,
// until ctx is done (it returns ctx's error) or a failure (an *Error).
// It blocks for as long as it follows.
func (r *Runner) Follow(ctx context.Context) error {
	if _, err := r.CatchUp(ctx); err != nil {
		return err
	}
	pr := Progress{Position: r.Checkpoint(), Live: true}
	err := r.consume(&pr, r.log.Subscribe(ctx, r.Checkpoint()), "subscribe")
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// consume applies the events of seq, counting them in pr.
func (r *Runner) consume(pr *Progress, seq iter.Seq2[events.Event, error], op string) error {
	for ev, err := range seq {
		var poison *events.PoisonError
		switch {
		case errors.As(err, &poison):
			r.quarantine(poison, nil)
		case err != nil:
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return &Error{Op: op, Err: fmt.Errorf("after position %d: %w", pr.Position, err)}
		default:
			r.apply(pr, ev)
		}
		pr.Read++
		pr.Position = ev.Position
		if r.progress != nil && (pr.Live || pr.Read%r.every == 0) {
			r.progress(*pr)
		}
	}
	return nil
}

// Apply folds ev, one event of a read of the log made elsewhere (a
// start-up read of the whole log that feeds several consumers, such as
// weft's Runtime.RecoverWith), into the projections as CatchUp folds each
// event it reads: an event that does not decode, or that a projection
// refuses, is quarantined, not returned. Feed it the events in log order.
// It reports no progress.
func (r *Runner) Apply(ev events.Event) {
	var pr Progress
	r.apply(&pr, ev)
}

// apply decodes ev and applies it to every projection that has not seen
// it. An event that does not decode is quarantined for all of them; one a
// projection refuses, for that projection (the others apply it).
func (r *Runner) apply(pr *Progress, ev events.Event) {
	d, err := Decode(ev)
	if err != nil {
		r.quarantine(events.Poison(ev, err), nil)
		return
	}
	for _, p := range r.projs {
		if p.Checkpoint() >= ev.Position {
			continue
		}
		if err := p.Apply(d); err != nil {
			r.quarantine(events.Poison(ev, err), p)
			continue
		}
		pr.Applied++
	}
}

func (r *Runner) report(pr Progress) {
	if r.progress != nil {
		r.progress(pr)
	}
}
