package resilient

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/weft-run/weft/llm"
)

// The defaults of Retry's options.
const (
	DefaultMaxAttempts  = 4                      // the first attempt and up to 3 retries
	DefaultMaxElapsed   = 5 * time.Minute        // from the first attempt's start
	DefaultInitialDelay = 500 * time.Millisecond // the wait before the first retry
	DefaultMaxDelay     = 30 * time.Second       // the longest wait, Retry-After included
	DefaultMultiplier   = 2.0                    // each wait is this times the previous
	DefaultJitter       = 0.5                    // each wait is randomised by ±50%
)

// RetryOption configures Retry.
type RetryOption func(*retryConfig)

type retryConfig struct {
	maxAttempts int
	maxElapsed  time.Duration
	initial     time.Duration
	maxDelay    time.Duration
	multiplier  float64
	jitter      float64
	onRetry     func(attempt int, err error, wait time.Duration)
}

// WithMaxAttempts bounds the attempts of one request, the first included
// (default DefaultMaxAttempts). n <= 0 removes the bound, leaving the
// elapsed time (WithMaxElapsed) and the context to end the retries.
func WithMaxAttempts(n int) RetryOption {
	return func(c *retryConfig) { c.maxAttempts = max(n, 0) }
}

// WithMaxElapsed bounds the time from the first attempt's start to the
// last one's (default DefaultMaxElapsed): Retry gives up, without waiting,
// when the next wait would end past it. d <= 0 removes the bound.
func WithMaxElapsed(d time.Duration) RetryOption {
	return func(c *retryConfig) { c.maxElapsed = max(d, 0) }
}

// WithDelays sets the wait before the first retry (default
// DefaultInitialDelay), the longest wait (default DefaultMaxDelay) and the
// factor by which each wait grows (default DefaultMultiplier; values
// below 1 are taken as 1). Zero values keep the defaults.
func WithDelays(initial, maxDelay time.Duration, multiplier float64) RetryOption {
	return func(c *retryConfig) {
		if initial > 0 {
			c.initial = initial
		}
		if maxDelay > 0 {
			c.maxDelay = maxDelay
		}
		if multiplier > 0 {
			c.multiplier = max(multiplier, 1)
		}
	}
}

// WithJitter sets the randomisation of each wait: a wait d becomes a
// random duration in [d·(1-f), d·(1+f)] (default DefaultJitter); f is
// clamped to [0, 1], and 0 makes the waits exact.
func WithJitter(f float64) RetryOption {
	return func(c *retryConfig) { c.jitter = min(max(f, 0), 1) }
}

// WithOnRetry calls f before each wait, with the number of the attempt
// that failed (1 for the first), its error and the wait before the next
// attempt, for logging or metrics. f must not block.
func WithOnRetry(f func(attempt int, err error, wait time.Duration)) RetryOption {
	return func(c *retryConfig) { c.onRetry = f }
}

// Retry returns m, sending a request again when it fails with an error
// llm.IsRetryable reports as retryable (a rate limit, an overload, a
// server error, a lost connection: the adapters decide), with exponential
// backoff and jitter, within a budget. The backoff and its budget are
// those of github.com/cenkalti/backoff.
//
// The wait before retry k (k = 1, 2, …) is initial·multiplierᵏ⁻¹,
// randomised by the jitter, at least the error's RetryAfter (the
// provider's Retry-After), and at most the max delay. A Retry-After longer
// than the max delay is cut to it: the next attempt comes earlier than the
// provider asked, may be refused again and spends an attempt; raise the
// max delay (WithDelays) to wait as long as providers ask.
//
// Retry returns at once, with the model's error as it is, on an error
// that is not retryable (400, 401, 403, 404, an invalid request) or when
// ctx ended. When ctx ends during a wait, it returns promptly a
// *llm.ModelError that unwraps to ctx.Err() (and to the last attempt's
// error). When the budget runs out it returns a *llm.ModelError with the
// last attempt's fields (provider, model, status, type, code, Retryable,
// RetryAfter) whose cause is an *ExhaustedError (matching ErrExhausted)
// saying after how many attempts, and wrapping the last error.
//
// An answer's Attempts is how many times the request was sent for it,
// counting the attempts an inner retrying wrapper reports (its answer's
// Attempts, or its *ExhaustedError's); an answer to the first attempt is
// left as the model gave it (Attempts 0 means one attempt, and
// model.response omits it). Retry names itself as m does
// (llm.NameOf), and its answers keep m's Response.Model.
//
// Retry also streams (llm.Streamer; m streams through llm.Stream): a
// stream is retried only when it failed before yielding any event to the
// consumer. Once an event was yielded, a later error is passed on to the
// consumer as it is, and the stream ends: the consumer has seen part of an
// answer, and a second answer would not continue it.
//
// Retry panics when m is nil, or when both WithMaxAttempts and
// WithMaxElapsed remove their bound: a retry without a budget would end
// only with ctx.
func Retry(m llm.Model, opts ...RetryOption) llm.Model {
	if m == nil {
		panic("resilient.Retry: nil model")
	}
	c := retryConfig{maxAttempts: DefaultMaxAttempts, maxElapsed: DefaultMaxElapsed, initial: DefaultInitialDelay,
		maxDelay: DefaultMaxDelay, multiplier: DefaultMultiplier, jitter: DefaultJitter}
	for _, o := range opts {
		o(&c)
	}
	if c.maxAttempts == 0 && c.maxElapsed == 0 {
		panic("resilient.Retry: neither the attempts nor the elapsed time is bounded")
	}
	c.initial = min(c.initial, c.maxDelay)
	return &retrying{m: m, name: llm.NameOf(m), cfg: c}
}

type retrying struct {
	m    llm.Model
	name string
	cfg  retryConfig
}

var (
	_ llm.Model    = (*retrying)(nil)
	_ llm.Streamer = (*retrying)(nil)
	_ llm.Named    = (*retrying)(nil)
)

// ModelName returns the wrapped model's name (llm.NameOf).
func (r *retrying) ModelName() string { return r.name }

// Request sends req to the wrapped model until it answers or Retry gives
// up. See Retry.
func (r *retrying) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	var resp *llm.Response
	var n int
	err := r.do(ctx, &n, func() error {
		var err error
		resp, err = r.m.Request(ctx, req)
		if err == nil && resp == nil {
			err = modelError(r.name, llm.ErrNilResponse)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return withAttempts(resp, n), nil
}

// Stream streams req from the wrapped model, starting again while a
// stream fails before yielding anything. See Retry.
func (r *retrying) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		var n int
		st := streamer{yield: yield, name: r.name}
		err := r.do(ctx, &n, func() error {
			return st.pass(llm.Stream(ctx, r.m, req), func(resp *llm.Response) *llm.Response {
				return withAttempts(resp, n)
			})
		})
		if err != nil && !st.done {
			yield(llm.StreamEvent{}, err)
		}
	}
}

// attemptError marks an error of an attempt, so that do tells it from the
// context's error the backoff loop returns when ctx ends during a wait.
type attemptError struct{ err error }

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// do runs attempt until it returns nil or Retry gives up, and returns the
// error Retry returns (see Retry). *n counts the attempts that failed so
// far, including those an inner wrapper reports in its error
// (attemptsIn): on success it is the count before the successful
// attempt, on failure the total.
func (r *retrying) do(ctx context.Context, n *int, attempt func() error) error {
	c := r.cfg
	var last error
	pol := &policy{maxDelay: c.maxDelay, last: &last, exp: &backoff.ExponentialBackOff{
		InitialInterval: c.initial, RandomizationFactor: c.jitter, Multiplier: c.multiplier, MaxInterval: c.maxDelay}}
	calls := 0
	op := func() (struct{}, error) {
		calls++
		err := attempt()
		if err == nil {
			return struct{}{}, nil
		}
		last = err
		*n += attemptsIn(err)
		if !retryable(err) || ctx.Err() != nil {
			return struct{}{}, backoff.Permanent(&attemptError{err})
		}
		return struct{}{}, &attemptError{err}
	}
	opts := []backoff.RetryOption{backoff.WithBackOff(pol), backoff.WithMaxTries(uint(c.maxAttempts)),
		backoff.WithMaxElapsedTime(c.maxElapsed)}
	if c.onRetry != nil {
		opts = append(opts, backoff.WithNotify(func(_ error, wait time.Duration) { c.onRetry(calls, last, wait) }))
	}
	start := time.Now()
	_, err := backoff.Retry(ctx, op, opts...)
	if err == nil {
		return nil
	}
	ae, fromAttempt := errors.AsType[*attemptError](err)
	switch {
	case !fromAttempt:
		// ctx ended during a wait: the loop returned the context's cause.
		me := lastFields(last, r.name)
		me.Err = fmt.Errorf("%w while waiting to retry after %s: %w", ctx.Err(), attempts(*n), unwrapModel(last))
		me.Retryable, me.RetryAfter = false, 0
		return me
	case ctx.Err() != nil, !retryable(ae.err):
		return ae.err
	default:
		me := lastFields(ae.err, r.name)
		me.Err = &ExhaustedError{Attempts: *n, Elapsed: time.Since(start), Last: ae.err}
		return me
	}
}

func retryable(err error) bool {
	retry, _ := llm.IsRetryable(err)
	return retry
}

// lastFields returns a copy of the *llm.ModelError err is or wraps (one
// naming the model name when there is none), for an error that keeps its
// fields.
func lastFields(err error, name string) *llm.ModelError {
	if me, ok := errors.AsType[*llm.ModelError](err); ok {
		cp := *me
		return &cp
	}
	return modelError(name, err)
}

// unwrapModel returns the cause of the *llm.ModelError err is, or err.
func unwrapModel(err error) error {
	if me, ok := err.(*llm.ModelError); ok && me.Err != nil {
		return me.Err
	}
	return err
}

// attemptsIn is how many attempts a failed request counts: those an inner
// Retry reports in its *ExhaustedError, or one.
func attemptsIn(err error) int {
	if x, ok := errors.AsType[*ExhaustedError](err); ok && x.Attempts > 0 {
		return x.Attempts
	}
	return 1
}

// withAttempts returns resp, answered after n failed attempts: as it is
// when there were none, otherwise a copy whose Attempts adds n to its own
// count (1 when the model did not count).
func withAttempts(resp *llm.Response, n int) *llm.Response {
	if n == 0 {
		return resp
	}
	out := *resp
	out.Attempts = n + max(resp.Attempts, 1)
	return &out
}

// policy is the backoff of one request: the library's exponential backoff
// with jitter, raised to the last error's RetryAfter and capped at the max
// delay.
type policy struct {
	exp      *backoff.ExponentialBackOff
	maxDelay time.Duration
	last     *error
}

func (p *policy) Reset() { p.exp.Reset() }

func (p *policy) NextBackOff() time.Duration {
	d := p.exp.NextBackOff()
	if _, after := llm.IsRetryable(*p.last); after > d {
		d = after
	}
	return min(d, p.maxDelay)
}
