package resilient

import (
	"context"
	"iter"
	"time"

	"golang.org/x/time/rate"

	"github.com/weft-run/weft/llm"
)

// Limiter is a client-side rate limit on model requests: requests per
// minute and tokens per minute, as token buckets (golang.org/x/time/rate)
// that refill continuously and hold at most one minute's budget. One
// Limiter is meant to be shared by every model wrapped with RateLimit that
// counts against the same provider limit — across the sessions, agents
// and goroutines of a process; it is safe for concurrent use.
//
// A request's tokens are estimated before it is sent (see
// WithTokenEstimate; by default ceil(bytes/4) of its instructions,
// messages and tools, as llm.EstimateUsage counts input tokens) and
// reserved; when the answer comes, the reservation is reconciled with the
// answer's real usage (input plus output tokens): tokens used beyond the
// estimate are taken from the bucket too, so later requests wait for
// them. An estimate above the real usage is not given back (the bucket
// has no way to return tokens); the over-count is at most that request's
// estimate error, and is gone within a minute. A request that fails keeps
// its estimate reserved.
type Limiter struct {
	requests *rate.Limiter // nil: no request limit
	tokens   *rate.Limiter // nil: no token limit
	tpm      int64
	estimate func(*llm.Request) int64
}

// LimiterOption configures NewLimiter.
type LimiterOption func(*Limiter)

// WithTokenEstimate sets how a request's tokens are estimated before it is
// sent, for a caller that knows better than bytes/4 (a tokenizer, or
// adding the expected output such as Settings.MaxTokens). f must be safe
// for concurrent use; a negative estimate counts as 0.
func WithTokenEstimate(f func(*llm.Request) int64) LimiterOption {
	return func(l *Limiter) { l.estimate = f }
}

// NewLimiter returns a limiter of requestsPerMinute requests and
// tokensPerMinute tokens per minute; a value <= 0 leaves that dimension
// unlimited. Up to a minute's budget may be used at once (the buckets'
// burst), then the budget refills at a sixtieth per second.
func NewLimiter(requestsPerMinute, tokensPerMinute int, opts ...LimiterOption) *Limiter {
	l := &Limiter{estimate: estimateTokens}
	if requestsPerMinute > 0 {
		l.requests = rate.NewLimiter(rate.Limit(float64(requestsPerMinute)/60), requestsPerMinute)
	}
	if tokensPerMinute > 0 {
		l.tokens = rate.NewLimiter(rate.Limit(float64(tokensPerMinute)/60), tokensPerMinute)
		l.tpm = int64(tokensPerMinute)
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

// estimateTokens is the default estimate: the input tokens
// llm.EstimateUsage counts for req.
func estimateTokens(req *llm.Request) int64 {
	return llm.EstimateUsage(req, &llm.Response{}).InputTokens
}

// admit waits until one request of est tokens may be sent, or ctx ends
// (ctx.Err()). A request of more tokens than the whole per-minute budget
// is a *TooLargeError at once.
func (l *Limiter) admit(ctx context.Context, est int64) error {
	if l.tokens != nil && est > l.tpm {
		return &TooLargeError{Estimate: est, Budget: l.tpm}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	var rs []*rate.Reservation
	var delay time.Duration
	if l.requests != nil {
		r := l.requests.ReserveN(now, 1)
		rs, delay = append(rs, r), max(delay, r.DelayFrom(now))
	}
	if l.tokens != nil && est > 0 {
		r := l.tokens.ReserveN(now, int(est))
		rs, delay = append(rs, r), max(delay, r.DelayFrom(now))
	}
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, r := range rs {
			r.Cancel() // give the reservations back to the requests behind
		}
		return ctx.Err()
	}
}

// settle reconciles a request admitted with est tokens with the usage of
// its answer: the tokens used beyond the estimate are taken from the
// bucket, to be waited for by the requests that follow.
func (l *Limiter) settle(est int64, u llm.Usage) {
	if l.tokens == nil {
		return
	}
	now := time.Now()
	for extra := u.TotalTokens() - est; extra > 0; extra -= l.tpm {
		l.tokens.ReserveN(now, int(min(extra, l.tpm)))
	}
}

// RateLimit returns m, waiting before each request until l admits it (see
// Limiter) or ctx ends. Wrap each attempt, inside a Retry:
// Retry(RateLimit(m, l)), so that every attempt counts against the limit.
//
// A request whose estimate exceeds l's tokens per minute fails at once
// with a *llm.ModelError whose cause is a *TooLargeError (ErrTooLarge),
// not retryable: no wait would admit it. When ctx ends during the wait,
// the error is a *llm.ModelError that unwraps to ctx.Err(). Both name the
// model as m does; RateLimit names itself as m does (llm.NameOf). It
// streams too: the wait comes before the stream starts, and the stream's
// final Response settles the usage. RateLimit panics when m or l is nil.
func RateLimit(m llm.Model, l *Limiter) llm.Model {
	if m == nil || l == nil {
		panic("resilient.RateLimit: nil model or limiter")
	}
	return &limited{m: m, l: l, name: llm.NameOf(m)}
}

type limited struct {
	m    llm.Model
	l    *Limiter
	name string
}

var (
	_ llm.Model    = (*limited)(nil)
	_ llm.Streamer = (*limited)(nil)
	_ llm.Named    = (*limited)(nil)
)

// ModelName returns the wrapped model's name (llm.NameOf).
func (r *limited) ModelName() string { return r.name }

// Request waits for the limiter, then sends req. See RateLimit.
func (r *limited) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	est, err := r.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := r.m.Request(ctx, req)
	if err == nil && resp != nil {
		r.l.settle(est, resp.Usage)
	}
	return resp, err
}

// Stream waits for the limiter, then streams req. See RateLimit.
func (r *limited) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		est, err := r.admit(ctx, req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for ev, err := range llm.Stream(ctx, r.m, req) {
			if ev.Response != nil {
				r.l.settle(est, ev.Response.Usage)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// admit estimates req and waits for the limiter to admit it.
func (r *limited) admit(ctx context.Context, req *llm.Request) (int64, error) {
	if req == nil {
		return 0, modelError(r.name, llm.ErrNilRequest)
	}
	est := max(r.l.estimate(req), 0)
	if err := r.l.admit(ctx, est); err != nil {
		return 0, modelError(r.name, err)
	}
	return est, nil
}
