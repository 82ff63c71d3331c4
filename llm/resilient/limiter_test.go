package resilient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// One limiter shared by the models of many goroutines admits a minute's
// requests at once, then one per sixtieth of the per-minute rate: here 3
// per minute, so the fourth to sixth wait 20 s more each.
func TestLimiterSharedAcrossGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := resilient.NewLimiter(3, 0)
		log := &callLog{}
		models := make([]llm.Model, 2)
		for i := range models {
			f := newFake("fake:m", ok("done"))
			f.log = log
			models[i] = resilient.RateLimit(f, l)
		}
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				if _, err := models[i%2].Request(t.Context(), request("hi")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		_, times := log.snapshot()
		var at []time.Duration
		for _, ts := range times {
			at = append(at, ts.Sub(start))
		}
		slices.Sort(at)
		want := []time.Duration{0, 0, 0, 20 * time.Second, 40 * time.Second, 60 * time.Second}
		if d := cmp.Diff(want, at); d != "" {
			t.Errorf("when the requests were sent (-want +got):\n%s", d)
		}
	})
}

// A request is admitted on its estimate; when the answer used more, the
// difference is taken too and later requests wait for it.
func TestLimiterReconcilesRealUsage(t *testing.T) {
	prompt := strings.Repeat("x", 400) // 100 tokens by bytes/4
	tests := []struct {
		name     string
		usage    llm.Usage
		estimate func(*llm.Request) int64
		want     []time.Duration // when each of three requests was sent
	}{
		// 600 tokens a minute (10 a second). The first request is
		// estimated at 100 and used 500: 100 are left for the second,
		// and the third waits 10 s for its 100.
		{name: "more than estimated", usage: llm.Usage{InputTokens: 120, OutputTokens: 380},
			want: []time.Duration{0, 0, 10 * time.Second}},
		{name: "as estimated", usage: llm.Usage{InputTokens: 100},
			want: []time.Duration{0, 0, 0}},
		{name: "the caller's estimate", usage: llm.Usage{InputTokens: 100},
			estimate: func(*llm.Request) int64 { return 250 },
			want:     []time.Duration{0, 0, 15 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var opts []resilient.LimiterOption
				if tt.estimate != nil {
					opts = append(opts, resilient.WithTokenEstimate(tt.estimate))
				}
				l := resilient.NewLimiter(0, 600, opts...)
				f := streamingFake{newFake("fake:m", step{deltas: []string{"done"}, usage: tt.usage}, step{deltas: []string{"done"}})}
				m := resilient.RateLimit(f, l)
				start := time.Now()
				if _, err := m.Request(t.Context(), request(prompt)); err != nil {
					t.Fatal(err)
				}
				for range 2 {
					if _, err := llm.Collect(llm.Stream(t.Context(), m, request(prompt))); err != nil {
						t.Fatal(err)
					}
				}
				_, times := f.log.snapshot()
				var at []time.Duration
				for _, ts := range times {
					at = append(at, ts.Sub(start))
				}
				if d := cmp.Diff(tt.want, at); d != "" {
					t.Errorf("when the requests were sent (-want +got):\n%s", d)
				}
			})
		})
	}
}

// A request larger than the whole per-minute token budget fails at once,
// is not retried and is not sent.
func TestLimiterRefusesOversizeRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("openai:gpt-4.1", ok("never"))
		m := resilient.Retry(resilient.RateLimit(f, resilient.NewLimiter(10, 100)))
		start := time.Now()
		_, err := m.Request(t.Context(), request(strings.Repeat("x", 404))) // 101 tokens
		tl, isTooLarge := errors.AsType[*resilient.TooLargeError](err)
		me, isModel := errors.AsType[*llm.ModelError](err)
		if !isTooLarge || !isModel || !errors.Is(err, resilient.ErrTooLarge) || me.Retryable {
			t.Fatalf("err = %#v, want a model error around a *TooLargeError", err)
		}
		if tl.Estimate != 101 || tl.Budget != 100 || me.Provider != "openai" || me.Model != "gpt-4.1" {
			t.Errorf("error = %+v (%+v), want 101 of 100 tokens, for openai gpt-4.1", tl, me)
		}
		if f.Calls() != 0 || time.Since(start) != 0 {
			t.Errorf("the model was called %d times after %v; want none, at once", f.Calls(), time.Since(start))
		}
	})
}

// When the context ends during a wait for the limiter, the request
// returns at once with the context's error and is not sent; its place is
// given back to the requests behind it.
func TestLimiterContextEndsDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := resilient.NewLimiter(1, 0)
		f := newFake("fake:m", ok("done"))
		m := resilient.RateLimit(f, l)
		if _, err := m.Request(t.Context(), request("first")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := m.Request(ctx, request("second"))
			done <- err
		}()
		synctest.Wait()
		cancel()
		err := <-done
		if _, isModel := errors.AsType[*llm.ModelError](err); !isModel || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want a model error unwrapping to context.Canceled", err)
		}
		if time.Since(start) != 0 || f.Calls() != 1 {
			t.Errorf("returned after %v with %d calls, want at once with 1", time.Since(start), f.Calls())
		}
		// The third request takes the cancelled one's place: a minute
		// after the first.
		if _, err := m.Request(t.Context(), request("third")); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Errorf("the third request waited %v, want 1m0s", waited)
		}
	})
}

// RateLimit names itself as its model.
func TestRateLimitName(t *testing.T) {
	if got := llm.NameOf(resilient.RateLimit(newFake("openai:gpt-4.1"), resilient.NewLimiter(1, 1))); got != "openai:gpt-4.1" {
		t.Errorf("NameOf = %q", got)
	}
}
