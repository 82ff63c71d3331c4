package resilient_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// Retryable errors are retried until the model answers; the answer counts
// the attempts. Errors that are not retryable are returned at once, as
// the model returned them.
func TestRetryRetriesOnlyRetryableErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantCalls int
	}{
		{"rate limited (429)", statusErr(429, true, 0), 3},
		{"overloaded (529)", statusErr(529, true, 0), 3},
		{"unavailable (503)", statusErr(503, true, 0), 3},
		{"server error (500)", statusErr(500, true, 0), 3},
		{"connection error", connErr(), 3},
		{"bad request (400)", statusErr(400, false, 0), 1},
		{"unauthorized (401)", statusErr(401, false, 0), 1},
		{"forbidden (403)", statusErr(403, false, 0), 1},
		{"not found (404)", statusErr(404, false, 0), 1},
		{"an error that is not a ModelError", errors.New("boom"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newFake("fake:m", fail(tt.err), fail(tt.err), ok("done"))
				resp, err := resilient.Retry(m).Request(t.Context(), request("hi"))
				if got := m.Calls(); got != tt.wantCalls {
					t.Errorf("calls = %d, want %d", got, tt.wantCalls)
				}
				if tt.wantCalls == 1 {
					if err != tt.err || resp != nil {
						t.Fatalf("Request = %+v, %v; want the model's error %v as it is", resp, err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != "done" || resp.Attempts != 3 || resp.Model != "fake:m" {
					t.Errorf("response = %+v, want done after 3 attempts from fake:m", resp)
				}
			})
		})
	}
}

// A request whose context ended is not sent again, even when the error
// the model returned says it is retryable.
func TestRetryStopsOnEndedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		retryable := statusErr(503, true, 0)
		m := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
			cancel() // the connection broke because the caller gave up
			return nil, retryable
		})
		var calls int
		counted := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			calls++
			return m(ctx, req)
		})
		_, err := resilient.Retry(counted).Request(ctx, request("hi"))
		if err != retryable || calls != 1 {
			t.Errorf("Request = %v after %d calls; want the model's error after 1", err, calls)
		}
	})
}

// The wait before each retry grows exponentially up to the max delay, is
// at least the Retry-After the provider asked for, and at most the max
// delay, however long the provider asked. The test checks the waits Retry
// asks for and the time between the calls on the bubble's fake clock.
func TestRetryWaits(t *testing.T) {
	tests := []struct {
		name  string
		errs  []error
		opts  []resilient.RetryOption
		waits []time.Duration
	}{
		{name: "exponential, capped at the max delay",
			errs:  []error{statusErr(500, true, 0), statusErr(500, true, 0), statusErr(500, true, 0), statusErr(500, true, 0)},
			opts:  []resilient.RetryOption{resilient.WithMaxAttempts(5), resilient.WithDelays(time.Second, 5*time.Second, 2)},
			waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}},
		{name: "Retry-After longer than the backoff",
			errs:  []error{statusErr(429, true, 7*time.Second), statusErr(429, true, 0)},
			opts:  []resilient.RetryOption{resilient.WithDelays(time.Second, 30*time.Second, 2)},
			waits: []time.Duration{7 * time.Second, 2 * time.Second}},
		{name: "Retry-After shorter than the backoff",
			errs:  []error{statusErr(429, true, 0), statusErr(429, true, time.Second)},
			opts:  []resilient.RetryOption{resilient.WithDelays(3*time.Second, 30*time.Second, 2)},
			waits: []time.Duration{3 * time.Second, 6 * time.Second}},
		{name: "Retry-After longer than the max delay is cut to it",
			errs:  []error{statusErr(429, true, 10*time.Minute)},
			opts:  []resilient.RetryOption{resilient.WithDelays(time.Second, 30*time.Second, 2)},
			waits: []time.Duration{30 * time.Second}},
		{name: "the defaults",
			errs:  []error{statusErr(529, true, 0), statusErr(529, true, 0), statusErr(529, true, 0)},
			waits: []time.Duration{resilient.DefaultInitialDelay, 2 * resilient.DefaultInitialDelay, 4 * resilient.DefaultInitialDelay}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				steps := make([]step, 0, len(tt.errs)+1)
				for _, err := range tt.errs {
					steps = append(steps, fail(err))
				}
				m := newFake("fake:m", append(steps, ok("done"))...)
				var w waits
				opts := append([]resilient.RetryOption{resilient.WithJitter(0), resilient.WithOnRetry(w.record)}, tt.opts...)
				resp, err := resilient.Retry(m, opts...).Request(t.Context(), request("hi"))
				if err != nil {
					t.Fatal(err)
				}
				if resp.Attempts != len(tt.errs)+1 {
					t.Errorf("attempts = %d, want %d", resp.Attempts, len(tt.errs)+1)
				}
				if d := cmp.Diff(tt.waits, w.d); d != "" {
					t.Errorf("requested waits (-want +got):\n%s", d)
				}
				_, times := m.log.snapshot()
				if d := cmp.Diff(tt.waits, gaps(times)); d != "" {
					t.Errorf("time between calls (-want +got):\n%s", d)
				}
				wantAttempts := make([]int, len(tt.errs))
				for i := range wantAttempts {
					wantAttempts[i] = i + 1
				}
				if d := cmp.Diff(wantAttempts, w.attempts); d != "" {
					t.Errorf("failed attempts reported (-want +got):\n%s", d)
				}
			})
		})
	}
}

// Jitter randomises each wait within ±f of the exponential delay.
func TestRetryJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newFake("fake:m", fail(statusErr(503, true, 0)))
		var w waits
		_, err := resilient.Retry(m, resilient.WithMaxAttempts(8), resilient.WithJitter(0.5), resilient.WithOnRetry(w.record),
			resilient.WithDelays(time.Second, time.Hour, 2)).Request(t.Context(), request("hi"))
		if !errors.Is(err, resilient.ErrExhausted) {
			t.Fatalf("err = %v, want exhausted", err)
		}
		base := time.Second
		distinct := map[time.Duration]bool{}
		for i, d := range w.d {
			if lo, hi := base/2, base*3/2+1; d < lo || d > hi {
				t.Errorf("wait %d = %v, want within [%v, %v]", i+1, d, lo, hi)
			}
			distinct[d-base] = true
			base *= 2
		}
		if len(w.d) != 7 || len(distinct) < 2 {
			t.Errorf("waits = %v: want 7 randomised waits", w.d)
		}
	})
}

// When the budget runs out, the error keeps the last attempt's fields,
// wraps its error and says after how many attempts.
func TestRetryBudgetExhausted(t *testing.T) {
	tests := []struct {
		name      string
		opts      []resilient.RetryOption
		wantCalls int
	}{
		{"max attempts", []resilient.RetryOption{resilient.WithMaxAttempts(3)}, 3},
		{"default max attempts", nil, resilient.DefaultMaxAttempts},
		// Calls at 0s, 4s and 8s; the next would be at 12s, past 10s.
		{"max elapsed time", []resilient.RetryOption{resilient.WithMaxAttempts(0), resilient.WithMaxElapsed(10 * time.Second),
			resilient.WithDelays(4*time.Second, 4*time.Second, 1)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				first, last := statusErr(503, true, 0), statusErr(429, true, time.Second)
				last.Type = "rate_limit_error"
				m := newFake("fake:m", fail(first), fail(last))
				_, err := resilient.Retry(m, append([]resilient.RetryOption{resilient.WithJitter(0)}, tt.opts...)...).Request(t.Context(), request("hi"))
				if got := m.Calls(); got != tt.wantCalls {
					t.Errorf("calls = %d, want %d", got, tt.wantCalls)
				}
				me, isModel := errors.AsType[*llm.ModelError](err)
				ex, isExhausted := errors.AsType[*resilient.ExhaustedError](err)
				if !isModel || !isExhausted || !errors.Is(err, resilient.ErrExhausted) || !errors.Is(err, last) {
					t.Fatalf("err = %#v; want a *llm.ModelError around an *ExhaustedError wrapping the last error", err)
				}
				if me.Provider != "fake" || me.Model != "m" || me.StatusCode != 429 || me.Type != "rate_limit_error" ||
					!me.Retryable || me.RetryAfter != time.Second {
					t.Errorf("error fields = %+v, want the last attempt's", me)
				}
				if ex.Attempts != tt.wantCalls {
					t.Errorf("Attempts = %d, want %d", ex.Attempts, tt.wantCalls)
				}
				want := `model "fake:m": status 429 (rate_limit_error): gave up after ` + strconv.Itoa(tt.wantCalls) + ` attempts: too many requests`
				if err.Error() != want {
					t.Errorf("error text = %q, want %q", err, want)
				}
			})
		})
	}
}

// When the context ends during a wait, Retry returns at once, with an
// error that unwraps to the context's and the last attempt's errors.
func TestRetryContextEndsDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		last := statusErr(429, true, time.Hour)
		m := newFake("fake:m", fail(last))
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := resilient.Retry(m, resilient.WithDelays(0, 2*time.Hour, 0), resilient.WithMaxElapsed(3*time.Hour)).Request(ctx, request("hi"))
			done <- err
		}()
		synctest.Wait() // the first attempt failed; Retry waits an hour
		cancel()
		err := <-done
		if waited := time.Since(start); waited != 0 {
			t.Errorf("returned after %v of the hour's wait, want at once", waited)
		}
		me, isModel := errors.AsType[*llm.ModelError](err)
		if !isModel || !errors.Is(err, context.Canceled) || !errors.Is(err, last.Err) || me.Retryable || m.Calls() != 1 {
			t.Errorf("err = %v after %d calls; want a model error unwrapping to context.Canceled after 1", err, m.Calls())
		}
		if want := "context canceled while waiting to retry after 1 attempt"; !strings.Contains(err.Error(), want) {
			t.Errorf("error text = %q, want it to contain %q", err, want)
		}
	})
}

// Retry names itself as the model it wraps.
func TestRetryName(t *testing.T) {
	tests := []struct {
		m    llm.Model
		want string
	}{
		{newFake("openai:gpt-4.1-mini"), "openai:gpt-4.1-mini"},
		{llm.Func(nil), llm.FuncName},
		{resilient.Retry(newFake("anthropic:claude")), "anthropic:claude"},
	}
	for _, tt := range tests {
		if got := llm.NameOf(resilient.Retry(tt.m)); got != tt.want {
			t.Errorf("NameOf(Retry(%s)) = %q, want %q", llm.NameOf(tt.m), got, tt.want)
		}
	}
}

// A nested Retry's attempts are counted by the outer one: those of its
// answer, and those of its exhausted budget.
func TestRetryCountsNestedAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := statusErr(503, true, 0)
		m := newFake("fake:m", fail(e), fail(e), fail(e), ok("done"))
		inner := resilient.Retry(m, resilient.WithMaxAttempts(2))
		resp, err := resilient.Retry(inner, resilient.WithMaxAttempts(2)).Request(t.Context(), request("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Attempts != 4 || m.Calls() != 4 {
			t.Errorf("attempts = %d, calls = %d; want 4 and 4", resp.Attempts, m.Calls())
		}
	})
}

// A retry without any budget is refused when it is built.
func TestRetryNeedsABudget(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Retry without a budget did not panic")
		}
	}()
	resilient.Retry(newFake("m"), resilient.WithMaxAttempts(0), resilient.WithMaxElapsed(0))
}

// An answer to the first attempt is the model's as it is: Attempts 0, the
// llm convention for one attempt, which model.response omits.
func TestRetryFirstAttemptAnswer(t *testing.T) {
	resp, err := resilient.Retry(newFake("fake:m", ok("done"))).Request(t.Context(), request("hi"))
	if err != nil || resp.Text != "done" || resp.Attempts != 0 || resp.Model != "fake:m" {
		t.Errorf("Request = %+v, %v; want fake:m's done with Attempts 0", resp, err)
	}
}
