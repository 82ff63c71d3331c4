package resilient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// Fallback asks the models in order until one answers, and the answer
// names the model that answered.
func TestFallbackOrder(t *testing.T) {
	e400, e429 := statusErr(400, false, 0), statusErr(429, true, 0)
	tests := []struct {
		name      string
		a, b, c   []step
		retryB    bool // wrap b in Retry (its budget runs out)
		wantOrder []string
		wantModel string
	}{
		{name: "the first answers",
			a: []step{ok("a")}, b: []step{ok("b")}, c: []step{ok("c")},
			wantOrder: []string{"fake:a"}, wantModel: "fake:a"},
		{name: "not retryable, then an exhausted budget, then an answer",
			a: []step{fail(e400)}, b: []step{fail(e429)}, c: []step{ok("c")}, retryB: true,
			wantOrder: []string{"fake:a", "fake:b", "fake:b", "fake:b", "fake:b", "fake:c"}, wantModel: "fake:c"},
		{name: "a retryable error without Retry moves on at once",
			a: []step{fail(e429)}, b: []step{ok("b")}, c: []step{ok("c")},
			wantOrder: []string{"fake:a", "fake:b"}, wantModel: "fake:b"},
		{name: "an answer that names no model is named after its model",
			a: []step{fail(e400)}, b: []step{{deltas: []string{"b"}, unnamed: true}}, c: []step{ok("c")},
			wantOrder: []string{"fake:a", "fake:b"}, wantModel: "fake:b"},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			name := tt.name
			if streamed {
				name += " (streamed)"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					log := &callLog{}
					mk := func(name string, steps []step) *fake {
						f := newFake(name, steps...)
						f.log = log
						return f
					}
					a, b, c := mk("fake:a", tt.a), mk("fake:b", tt.b), mk("fake:c", tt.c)
					var bm llm.Model = streamingFake{b}
					if tt.retryB {
						bm = resilient.Retry(bm)
					}
					fb := resilient.Fallback(streamingFake{a}, bm, c)
					var resp *llm.Response
					var err error
					if streamed {
						resp, err = llm.Collect(llm.Stream(t.Context(), fb, request("hi")))
					} else {
						resp, err = fb.Request(t.Context(), request("hi"))
					}
					if err != nil {
						t.Fatal(err)
					}
					if resp.Model != tt.wantModel {
						t.Errorf("answered by %q, want %q", resp.Model, tt.wantModel)
					}
					order, _ := log.snapshot()
					if d := cmp.Diff(tt.wantOrder, order); d != "" {
						t.Errorf("calls (-want +got):\n%s", d)
					}
				})
			})
		}
	}
}

// When every model fails, the error lists each model's error in order; it
// is retryable only when every one was, with the shortest Retry-After.
func TestFallbackAllFail(t *testing.T) {
	tests := []struct {
		name          string
		errs          []error
		wantRetryable bool
		wantAfter     time.Duration
	}{
		{"all rate limited", []error{statusErr(429, true, 5*time.Second), statusErr(529, true, 2*time.Second)}, true, 2 * time.Second},
		{"one refused", []error{statusErr(429, true, 5*time.Second), statusErr(401, false, 0)}, false, 0},
		{"one retryable at once", []error{statusErr(429, true, 5*time.Second), connErr()}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			models := make([]llm.Model, len(tt.errs))
			for i, err := range tt.errs {
				models[i] = newFake("fake:"+string(rune('a'+i)), fail(err))
			}
			_, err := resilient.Fallback(models...).Request(t.Context(), request("hi"))
			me, isModel := errors.AsType[*llm.ModelError](err)
			fe, isFallback := errors.AsType[*resilient.FallbackError](err)
			if !isModel || !isFallback || !errors.Is(err, resilient.ErrAllFailed) {
				t.Fatalf("err = %#v, want a *llm.ModelError around a *FallbackError", err)
			}
			if me.Model != "fallback(fake:a,fake:b)" || me.Retryable != tt.wantRetryable || me.RetryAfter != tt.wantAfter {
				t.Errorf("error fields = %+v, want model fallback(fake:a,fake:b), retryable %v after %v", me, tt.wantRetryable, tt.wantAfter)
			}
			if d := cmp.Diff(tt.errs, fe.Errs, cmp.Comparer(func(a, b error) bool { return a == b })); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			want := `model "fallback(fake:a,fake:b)": all 2 models failed: [1] ` + tt.errs[0].Error() + `; [2] ` + tt.errs[1].Error()
			if err.Error() != want {
				t.Errorf("error text = %q, want %q", err, want)
			}
		})
	}
}

// Retry around a Fallback retries the whole list when every model was
// rate limited.
func TestRetryAroundFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := statusErr(429, true, 3*time.Second)
		a, b := newFake("fake:a", fail(e), fail(e), ok("a")), newFake("fake:b", fail(e))
		var w waits
		resp, err := resilient.Retry(resilient.Fallback(a, b), resilient.WithJitter(0), resilient.WithOnRetry(w.record)).Request(t.Context(), request("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Model != "fake:a" || resp.Attempts != 3 || a.Calls() != 3 || b.Calls() != 2 {
			t.Errorf("answer %+v after %d and %d calls; want fake:a's after 3 and 2", resp, a.Calls(), b.Calls())
		}
		if d := cmp.Diff([]time.Duration{3 * time.Second, 3 * time.Second}, w.d); d != "" {
			t.Errorf("waits (-want +got):\n%s", d)
		}
	})
}

// When the context ends, no further model is asked.
func TestFallbackStopsOnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	a := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		cancel()
		return nil, statusErr(503, true, 0)
	})
	b := newFake("fake:b", ok("b"))
	for _, streamed := range []bool{false, true} {
		var err error
		if streamed {
			_, err = llm.Collect(llm.Stream(ctx, resilient.Fallback(a, b), request("hi")))
		} else {
			_, err = resilient.Fallback(a, b).Request(ctx, request("hi"))
		}
		if !errors.Is(err, context.Canceled) || errors.Is(err, resilient.ErrAllFailed) || b.Calls() != 0 {
			t.Errorf("streamed %v: err = %v after %d calls of b; want context.Canceled without asking b", streamed, err, b.Calls())
		}
		if want := "context canceled after 1 of 2 models failed"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error text = %v, want it to contain %q", err, want)
		}
	}
}

// A stream that yielded an event is not handed to the next model.
func TestFallbackStreamAfterAnEvent(t *testing.T) {
	e := statusErr(503, true, 0)
	a, b := streamingFake{newFake("fake:a", step{deltas: []string{"x"}, err: e})}, newFake("fake:b", ok("b"))
	g := consume(llm.Stream(t.Context(), resilient.Fallback(a, b), request("hi")), 0)
	if d := cmp.Diff(got{Deltas: []string{"x"}, Err: e.Error()}, g); d != "" {
		t.Errorf("stream (-want +got):\n%s", d)
	}
	if b.Calls() != 0 {
		t.Errorf("b was called %d times, want 0", b.Calls())
	}
}

// Fallback names the list, so that model.request records that the
// request went to it; an empty list is refused.
func TestFallbackName(t *testing.T) {
	fb := resilient.Fallback(resilient.Retry(newFake("openai:gpt-4.1")), newFake("anthropic:claude-sonnet-4-5"))
	if got, want := llm.NameOf(fb), "fallback(openai:gpt-4.1,anthropic:claude-sonnet-4-5)"; got != want {
		t.Errorf("NameOf = %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Fallback() did not panic")
		}
	}()
	resilient.Fallback()
}
