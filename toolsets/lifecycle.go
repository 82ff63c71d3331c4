package toolsets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Default lifecycle timeouts, used when a [LifecyclePolicy] sets none.
const (
	DefaultInitTimeout = 30 * time.Second
	DefaultReadTimeout = 30 * time.Second
	DefaultExitTimeout = 10 * time.Second
)

// LifecyclePolicy says how a runtime drives a toolset through a run. The
// zero value is the default: enter before the first preparation, exit
// after the run, the default timeouts, and an unavailable toolset leaves
// the run going without its tools.
type LifecyclePolicy struct {
	// InitTimeout bounds Enter; 0 means [DefaultInitTimeout].
	InitTimeout time.Duration
	// ReadTimeout bounds each Prepare and Refresh; 0 means
	// [DefaultReadTimeout]. A preparation that runs past it fails with an
	// error that says it timed out.
	ReadTimeout time.Duration
	// ExitTimeout bounds Exit; 0 means [DefaultExitTimeout].
	ExitTimeout time.Duration
	// SkipEnter: do not call Enter before preparing (the seed's
	// enter_before_prepare=False).
	SkipEnter bool
	// SkipExit: do not call Exit after the run (exit_after_run=False).
	SkipExit bool
	// FailWhenUnavailable: a toolset that reports itself unavailable
	// ([ErrUnavailable]) fails the run instead of being left out of it.
	FailWhenUnavailable bool
}

// Validate rejects negative timeouts.
func (p LifecyclePolicy) Validate() error {
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"InitTimeout", p.InitTimeout}, {"ReadTimeout", p.ReadTimeout}, {"ExitTimeout", p.ExitTimeout}} {
		if t.d < 0 {
			return fmt.Errorf("lifecycle policy: negative %s %s", t.name, t.d)
		}
	}
	return nil
}

func (p LifecyclePolicy) timeout(ph Phase) time.Duration {
	d, def := p.ReadTimeout, DefaultReadTimeout
	switch ph {
	case PhaseEnter:
		d, def = p.InitTimeout, DefaultInitTimeout
	case PhaseExit:
		d, def = p.ExitTimeout, DefaultExitTimeout
	}
	if d > 0 {
		return d
	}
	return def
}

// PolicyOf returns the lifecycle policy attached to ts with
// [WithLifecycle], and whether there is one. Without one, a runtime uses
// the zero [LifecyclePolicy] (or its own default).
func PolicyOf(ts Toolset) (LifecyclePolicy, bool) {
	if p, ok := ts.(interface {
		LifecyclePolicy() (LifecyclePolicy, bool)
	}); ok {
		return p.LifecyclePolicy()
	}
	return LifecyclePolicy{}, false
}

// ErrUnavailable is what a toolset's Enter, Prepare or Refresh returns
// (wrapped, or via [Unavailable]) when it cannot serve for now (a server
// down, a quota spent) but may come back. [Lifecycle] reports it as
// [StateUnavailable] rather than [StateFailed].
var ErrUnavailable = errors.New("toolsets: toolset unavailable")

// Unavailable returns an error matching [ErrUnavailable] with reason.
func Unavailable(reason string) error { return fmt.Errorf("%w: %s", ErrUnavailable, reason) }

// Phase is one lifecycle step.
type Phase string

// The lifecycle phases.
const (
	PhaseEnter   Phase = "enter"
	PhasePrepare Phase = "prepare"
	PhaseRefresh Phase = "refresh"
	PhaseExit    Phase = "exit"
)

// LifecycleError is a lifecycle step that failed: which toolset, which
// phase, and why. A step that ran past its timeout unwraps to a
// [*TimeoutError] (and its message says "timed out"); an unavailable
// toolset to [ErrUnavailable].
type LifecycleError struct {
	Toolset string
	ID      string
	Phase   Phase
	Err     error
}

func (e *LifecycleError) Error() string {
	return fmt.Sprintf("toolset %q: %s: %v", e.Toolset, e.Phase, e.Err)
}

func (e *LifecycleError) Unwrap() error { return e.Err }

// LifecycleState is the state a lifecycle transition leaves a toolset in.
// The set is closed.
type LifecycleState string

// The lifecycle states, as reported in [LifecycleReport.State]. Their
// values are the suffixes of the runtime's toolset.* event types.
const (
	// StateInitialized: the toolset was entered (per policy) and prepared
	// for the first time in the run.
	StateInitialized LifecycleState = "initialized"
	// StateRefreshed: the toolset was prepared again for the same run.
	StateRefreshed LifecycleState = "refreshed"
	// StateUnavailable: the toolset said it cannot serve for now.
	StateUnavailable LifecycleState = "unavailable"
	// StateFailed: a step failed (an error, a timeout).
	StateFailed LifecycleState = "failed"
	// StateClosed: the run ended and the toolset was exited (per policy).
	StateClosed LifecycleState = "closed"
)

// LifecycleReport is the typed record of one lifecycle transition, what a
// runtime turns into a toolset.* event (toolset.{State}).
type LifecycleReport struct {
	Name             string         `json:"name"`
	ID               string         `json:"id"`
	State            LifecycleState `json:"state"`
	ToolCount        int            `json:"tool_count"`
	InstructionCount int            `json:"instruction_count"`
	// Message says what happened: the error of a failed or unavailable
	// step, or a note ("exit skipped by policy").
	Message string `json:"message,omitempty"`
	// Digest is what a Digester toolset offered the run at this step
	// (initialized and refreshed reports); empty for other toolsets.
	Digest string `json:"digest,omitempty"`
}

// Digester is the optional role of a toolset that can sum up what it
// offers a run as a digest free of credentials: a live MCP toolset's hash
// of the tool names and schemas its server listed, say. Its lifecycle
// reports carry it, so that a change between two steps is recorded even
// when the tool names stay the same.
type Digester interface {
	Digest(runID string) string
}

// offered is the report of a successful step: with the digest of a
// Digester toolset.
func (l *Lifecycle) offered(state LifecycleState, p Preparation, tc *ToolsetContext) LifecycleReport {
	r := l.report(state, p, "")
	if d, ok := l.ts.(Digester); ok {
		r.Digest = d.Digest(tc.RunID)
	}
	return r
}

// Lifecycle drives one toolset through runs under its [LifecyclePolicy]:
// it is the piece a runtime calls. Build one per toolset with
// [NewLifecycle] and keep it for as long as the toolset is attached; it
// tracks each run (by [ToolsetContext.RunID]) separately and is safe for
// concurrent use.
//
// A runtime calls, for each run:
//
//   - [Lifecycle.Prepare] at every step (each model request), instead of
//     the toolset's Prepare. The first call of a run enters the toolset
//     (unless SkipEnter) and reports [StateInitialized]; later calls for
//     the same run, the re-preparation after an approval resume included,
//     call Refresh (or Prepare) and report [StateRefreshed].
//   - [Lifecycle.Exit] once when the run ends, however it ends; it reports
//     [StateClosed] and forgets the run.
//
// [Lifecycle.Enter] and [Lifecycle.Refresh] are there for a runtime that
// wants to enter eagerly or force a refresh. Each call returns a
// [LifecycleReport] to append to the run's log, and an error when the run
// must fail: a failed step, a timeout, or an unavailable toolset under
// FailWhenUnavailable. An unavailable toolset otherwise yields an empty
// preparation, a [StateUnavailable] report and no error.
//
// Each step runs under its policy timeout. A step that ignores its ctx
// past the deadline is abandoned (its result dropped) and reported as
// timed out; [Lifecycle.Wait] waits for such stragglers. Calls for one
// run must not overlap (a runtime prepares a run's steps one at a time);
// calls for different runs may.
type Lifecycle struct {
	ts     Toolset
	policy LifecyclePolicy

	mu   sync.Mutex
	runs map[string]*runState
	wg   sync.WaitGroup
}

type runState struct {
	entered  bool
	prepared bool
}

// NewLifecycle returns the driver of ts, with the policy attached to it
// by [WithLifecycle] or else the zero (default) policy.
func NewLifecycle(ts Toolset) *Lifecycle {
	p, _ := PolicyOf(ts)
	return &Lifecycle{ts: ts, policy: p, runs: map[string]*runState{}}
}

// Policy returns the policy in force.
func (l *Lifecycle) Policy() LifecyclePolicy { return l.policy }

// Toolset returns the driven toolset.
func (l *Lifecycle) Toolset() Toolset { return l.ts }

func (l *Lifecycle) run(tc *ToolsetContext) *runState {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := l.runs[tc.RunID]
	if rs == nil {
		rs = &runState{}
		l.runs[tc.RunID] = rs
	}
	return rs
}

func (l *Lifecycle) report(state LifecycleState, p Preparation, msg string) LifecycleReport {
	info := l.ts.Info()
	return LifecycleReport{Name: info.Name, ID: info.ID, State: state, ToolCount: len(p.Tools), InstructionCount: len(p.Instructions), Message: msg}
}

// fail turns a step's error into its report and error.
func (l *Lifecycle) fail(ph Phase, err error) (LifecycleReport, error) {
	info := l.ts.Info()
	lerr := &LifecycleError{Toolset: info.Name, ID: info.ID, Phase: ph, Err: err}
	if errors.Is(err, ErrUnavailable) {
		r := l.report(StateUnavailable, Preparation{}, lerr.Error())
		if l.policy.FailWhenUnavailable {
			return r, lerr
		}
		return r, nil
	}
	return l.report(StateFailed, Preparation{}, lerr.Error()), lerr
}

// Enter calls the toolset's Enter for tc's run, once per run, under the
// InitTimeout; it does nothing when the toolset is no [Enterer], the
// policy says SkipEnter, or the run was already entered. It reports
// failures only: the report is the zero value when Enter succeeded.
func (l *Lifecycle) Enter(ctx context.Context, tc *ToolsetContext) (LifecycleReport, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	rs := l.run(tc)
	l.mu.Lock()
	done := rs.entered
	l.mu.Unlock()
	e, ok := l.ts.(Enterer)
	if done || !ok || l.policy.SkipEnter {
		return LifecycleReport{}, nil
	}
	_, err := bounded(ctx, &l.wg, l.policy.timeout(PhaseEnter), func(ctx context.Context) (struct{}, error) {
		return struct{}{}, e.Enter(ctx, tc)
	})
	if err != nil {
		return l.fail(PhaseEnter, err)
	}
	l.mu.Lock()
	rs.entered = true
	l.mu.Unlock()
	return LifecycleReport{}, nil
}

// Prepare prepares the toolset for tc's step: the first time in a run it
// enters the toolset (see [Lifecycle.Enter]) and resolves its preparation
// ([Resolve]), reporting [StateInitialized]; afterwards it behaves as
// [Lifecycle.Refresh]. The returned preparation is flat (no Toolsets).
func (l *Lifecycle) Prepare(ctx context.Context, tc *ToolsetContext) (Preparation, LifecycleReport, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	rs := l.run(tc)
	l.mu.Lock()
	again := rs.prepared
	l.mu.Unlock()
	if again {
		return l.Refresh(ctx, tc)
	}
	if r, err := l.Enter(ctx, tc); err != nil || r.State != "" {
		return Preparation{}, r, err
	}
	p, err := bounded(ctx, &l.wg, l.policy.timeout(PhasePrepare), func(ctx context.Context) (Preparation, error) {
		return Resolve(ctx, l.ts, tc)
	})
	if err != nil {
		r, err := l.fail(PhasePrepare, err)
		return Preparation{}, r, err
	}
	l.mu.Lock()
	rs.prepared = true
	l.mu.Unlock()
	return p, l.offered(StateInitialized, p, tc), nil
}

// Refresh re-prepares the toolset for tc's run ([ResolveRefresh]: its
// Refresh when it is a [Refresher], else Prepare) under the ReadTimeout,
// and reports [StateRefreshed].
func (l *Lifecycle) Refresh(ctx context.Context, tc *ToolsetContext) (Preparation, LifecycleReport, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	rs := l.run(tc)
	p, err := bounded(ctx, &l.wg, l.policy.timeout(PhaseRefresh), func(ctx context.Context) (Preparation, error) {
		return ResolveRefresh(ctx, l.ts, tc)
	})
	if err != nil {
		r, err := l.fail(PhaseRefresh, err)
		return Preparation{}, r, err
	}
	l.mu.Lock()
	rs.prepared = true
	l.mu.Unlock()
	return p, l.offered(StateRefreshed, p, tc), nil
}

// Exit ends tc's run for the toolset: it calls Exit (under the
// ExitTimeout) when the toolset is an [Exiter] that was entered for the
// run (or has no Enter hook) and the policy does not say SkipExit, then
// forgets the run. It reports [StateClosed], or [StateFailed] with the
// error when Exit failed or timed out.
func (l *Lifecycle) Exit(ctx context.Context, tc *ToolsetContext) (LifecycleReport, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	l.mu.Lock()
	rs := l.runs[tc.RunID]
	delete(l.runs, tc.RunID)
	l.mu.Unlock()
	_, enters := l.ts.(Enterer)
	entered := rs != nil && (rs.entered || !enters || l.policy.SkipEnter)
	x, ok := l.ts.(Exiter)
	switch {
	case l.policy.SkipExit:
		return l.report(StateClosed, Preparation{}, "exit skipped by policy"), nil
	case !ok:
		return l.report(StateClosed, Preparation{}, ""), nil
	case !entered:
		return l.report(StateClosed, Preparation{}, "not entered for this run"), nil
	}
	_, err := bounded(ctx, &l.wg, l.policy.timeout(PhaseExit), func(ctx context.Context) (struct{}, error) {
		return struct{}{}, x.Exit(ctx, tc)
	})
	if err != nil {
		return l.fail(PhaseExit, err)
	}
	return l.report(StateClosed, Preparation{}, ""), nil
}

// Wait blocks until every step abandoned after its timeout has returned.
func (l *Lifecycle) Wait() { l.wg.Wait() }

// bounded runs f under timeout d. It returns f's result, or a
// [*TimeoutError] as soon as the deadline passes, even when f ignores its
// ctx (f is then abandoned; wg tracks it until it returns). A result that
// arrives after the deadline counts as a timeout too.
func bounded[T any](ctx context.Context, wg *sync.WaitGroup, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	timeout := &TimeoutError{After: d}
	ctx, cancel := context.WithTimeoutCause(ctx, d, timeout)
	defer cancel() // also tells an abandoned f to stop
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("panic: %v", p)}
			}
			ch <- r
		}()
		r.v, r.err = f(ctx)
	}()
	var zero T
	select {
	case r := <-ch:
		if errors.Is(context.Cause(ctx), timeout) {
			return zero, timeout
		}
		return r.v, r.err
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), timeout) {
			return zero, timeout
		}
		return zero, context.Cause(ctx)
	}
}
