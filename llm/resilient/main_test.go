package resilient_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-run/weft/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// step is one call's outcome for a fake model: the text deltas its stream
// yields first, then err, or (err nil) a final response with the deltas'
// text.
type step struct {
	deltas []string
	err    error
	usage  llm.Usage
	// noFinal ends the stream after the deltas without a response.
	noFinal bool
	// unnamed leaves Response.Model empty.
	unnamed bool
}

// fake is a model that answers from steps, in order, and records when it
// was called (on the clock of the test's bubble) in a log it may share
// with other fakes. It repeats its last step when the steps run out.
type fake struct {
	name  string
	steps []step
	log   *callLog

	mu    sync.Mutex
	calls int
}

type callLog struct {
	mu    sync.Mutex
	names []string
	times []time.Time
}

func (l *callLog) add(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = append(l.names, name)
	l.times = append(l.times, time.Now())
}

func (l *callLog) snapshot() ([]string, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...), append([]time.Time(nil), l.times...)
}

func newFake(name string, steps ...step) *fake {
	return &fake{name: name, steps: steps, log: &callLog{}}
}

func (f *fake) ModelName() string { return f.name }

func (f *fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fake) next(ctx context.Context) (step, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.mu.Unlock()
	f.log.add(f.name)
	if err := ctx.Err(); err != nil {
		return step{}, &llm.ModelError{Provider: "fake", Model: f.name, Err: err}
	}
	if len(f.steps) == 0 {
		return step{}, nil
	}
	return f.steps[min(i, len(f.steps)-1)], nil
}

func (f *fake) response(s step) *llm.Response {
	r := &llm.Response{Text: strings.Join(s.deltas, ""), Model: f.name, FinishReason: llm.FinishStop, Usage: s.usage}
	if s.unnamed {
		r.Model = ""
	}
	return r
}

func (f *fake) Request(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
	s, err := f.next(ctx)
	if err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	return f.response(s), nil
}

// streamingFake is a fake that streams its steps: the deltas, then the
// error or the final response.
type streamingFake struct{ *fake }

func (f streamingFake) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		s, err := f.next(ctx)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for _, d := range s.deltas {
			if !yield(llm.StreamEvent{TextDelta: d}, nil) {
				return
			}
		}
		switch {
		case s.err != nil:
			yield(llm.StreamEvent{}, s.err)
		case !s.noFinal:
			yield(llm.StreamEvent{Response: f.response(s)}, nil)
		}
	}
}

// statusErr is the error an adapter returns for an HTTP status.
func statusErr(code int, retryable bool, after time.Duration) *llm.ModelError {
	return &llm.ModelError{Provider: "fake", Model: "m", StatusCode: code, Retryable: retryable, RetryAfter: after,
		Err: errors.New(strings.ToLower(http.StatusText(code)))}
}

// connErr is the error an adapter returns for a lost connection.
func connErr() *llm.ModelError {
	return &llm.ModelError{Provider: "fake", Model: "m", Retryable: true, Err: errors.New("read: connection reset by peer")}
}

func ok(text string) step { return step{deltas: []string{text}} }

func fail(err error) step { return step{err: err} }

func request(prompt string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.UserPrompt{Text: prompt}}}}}
}

// waits records the waits Retry asks for (WithOnRetry).
type waits struct {
	mu       sync.Mutex
	attempts []int
	d        []time.Duration
}

func (w *waits) record(attempt int, _ error, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts = append(w.attempts, attempt)
	w.d = append(w.d, d)
}

// gaps returns the time between consecutive entries of ts.
func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]))
	}
	return out
}
