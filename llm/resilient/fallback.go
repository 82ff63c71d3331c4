package resilient

import (
	"context"
	"iter"
	"strings"

	"github.com/weft-run/weft/llm"
)

// Fallback returns a model that sends a request to models in order and
// returns the first answer: when one fails with any error while ctx is
// still alive (not retryable, or a Retry's exhausted budget, or a limit),
// the next is asked. Wrap each model in Retry (and RateLimit) first to
// retry it before moving on: Fallback(Retry(a), Retry(b)).
//
// Its answer's Response.Model is the name of the model that answered, as
// that model set it (or llm.NameOf of it when it set none), so the log's
// model.response records which one answered; Attempts is that model's.
//
// Fallback names itself "fallback(a,b,…)" with the llm.NameOf names of its
// models, so that model.request records that the request went to the
// list and not to its first model alone, while model.response says which
// model of the list answered.
//
// When ctx ends, Fallback returns at once without asking the next model.
// When every model failed, or ctx ended on the way, it returns a
// *llm.ModelError named as Fallback whose cause is a *FallbackError
// holding each model's error in order (matching ErrAllFailed when every
// model was tried, and unwrapping to the context's error when it ended
// the request). That error is retryable when every model's error was, with
// the shortest of their RetryAfter, so that Retry(Fallback(…)) retries
// the whole list when every model was rate-limited.
//
// Streaming follows Retry's rule: the next model is asked only when a
// stream failed before yielding any event to the consumer; an error after
// an event was yielded is passed on and ends the stream.
//
// Fallback panics when models is empty or holds a nil model.
func Fallback(models ...llm.Model) llm.Model {
	if len(models) == 0 {
		panic("resilient.Fallback: no models")
	}
	names := make([]string, len(models))
	for i, m := range models {
		if m == nil {
			panic("resilient.Fallback: nil model")
		}
		names[i] = llm.NameOf(m)
	}
	return &fallback{models: models, names: names, name: "fallback(" + strings.Join(names, ",") + ")"}
}

type fallback struct {
	models []llm.Model
	names  []string
	name   string
}

var (
	_ llm.Model    = (*fallback)(nil)
	_ llm.Streamer = (*fallback)(nil)
	_ llm.Named    = (*fallback)(nil)
)

// ModelName returns "fallback(a,b,…)"; see Fallback.
func (f *fallback) ModelName() string { return f.name }

// Request asks each model in turn. See Fallback.
func (f *fallback) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	errs := make([]error, 0, len(f.models))
	for i, m := range f.models {
		resp, err := m.Request(ctx, req)
		if err == nil && resp != nil {
			return f.answered(i, resp), nil
		}
		if err == nil {
			err = modelError(f.names[i], llm.ErrNilResponse)
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, f.failed(ctx, errs)
}

// Stream streams from each model in turn while a stream fails before
// yielding anything. See Fallback.
func (f *fallback) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		st := streamer{yield: yield, name: f.name}
		errs := make([]error, 0, len(f.models))
		for i, m := range f.models {
			err := st.pass(llm.Stream(ctx, m, req), func(resp *llm.Response) *llm.Response {
				return f.answered(i, resp)
			})
			if err == nil || st.done {
				return
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		yield(llm.StreamEvent{}, f.failed(ctx, errs))
	}
}

// answered returns model i's answer, named after it when it did not name
// itself.
func (f *fallback) answered(i int, resp *llm.Response) *llm.Response {
	if resp.Model != "" {
		return resp
	}
	out := *resp
	out.Model = f.names[i]
	return &out
}

// failed is the error of a request whose tried models failed with errs.
func (f *fallback) failed(ctx context.Context, errs []error) error {
	fe := &FallbackError{Errs: errs, Models: len(f.models), Ended: ctx.Err()}
	me := &llm.ModelError{Model: f.name, Err: fe, Retryable: fe.Ended == nil}
	for i, err := range errs {
		retry, after := llm.IsRetryable(err)
		me.Retryable = me.Retryable && retry
		if i == 0 || after < me.RetryAfter {
			me.RetryAfter = after
		}
	}
	if !me.Retryable {
		me.RetryAfter = 0
	}
	return me
}
