package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// FailCapability is the failure kind of a run whose capability hook (a
// model-request or run-complete hook) failed.
const FailCapability = "capability_error"

// RequestHook sees each model request of a run before it is sent and may
// amend it: its instructions, messages, tools and settings (the run info
// is restored after it). It runs on the goroutine that calls the model,
// in hook order; an error fails the run with FailCapability, and the
// model is not called. The model.request event holds what the runtime
// built; when the hooks changed it, model.response records the digests
// of the request before and after them (request_amended).
type RequestHook func(ctx context.Context, req *llm.Request) error

// RunCompleteHook sees a run's final output before run.completed is
// recorded. It runs on the goroutine that called the model, after the
// output validators accepted the output; an error fails the run with
// FailCapability, recorded in the same append as the model's response
// (the run's toolsets are still exited).
type RunCompleteHook func(ctx context.Context, done RunCompletion) error

// RunCompletion is what a RunCompleteHook sees.
type RunCompletion struct {
	Agent     string
	SessionID string
	RunID     string
	Output    string
}

// runRequestHooks runs hooks over a copy of req, which it returns with
// the digests of the request before and after them when they changed it;
// the copy shares nothing the hooks may change with req. err says which
// hook failed.
func runRequestHooks(ctx context.Context, hooks []RequestHook, req *llm.Request) (*llm.Request, *events.Amendment, error) {
	if len(hooks) == 0 {
		return req, nil, nil
	}
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	cp.Tools = slices.Clone(req.Tools)
	cp.Settings.Provider = maps.Clone(req.Settings.Provider)
	cp.Settings.StopSequences = slices.Clone(req.Settings.StopSequences)
	for i, h := range hooks {
		if h == nil {
			continue
		}
		if err := callCapability(func() error { return h(ctx, &cp) }); err != nil {
			return nil, nil, fmt.Errorf("model-request hook %d: %w", i+1, err)
		}
	}
	cp.Run = req.Run
	before, err1 := json.Marshal(req)
	after, err2 := json.Marshal(&cp)
	if err1 != nil || err2 != nil {
		return nil, nil, fmt.Errorf("model-request hooks: the amended request does not encode: %w", errors.Join(err1, err2))
	}
	if string(before) == string(after) {
		return &cp, nil, nil
	}
	return &cp, &events.Amendment{DigestBefore: toolsets.Digest(before), DigestAfter: toolsets.Digest(after)}, nil
}

// runCompleteHooks runs hooks over done in order; err says which failed.
func runCompleteHooks(ctx context.Context, hooks []RunCompleteHook, done RunCompletion) error {
	for i, h := range hooks {
		if h == nil {
			continue
		}
		if err := callCapability(func() error { return h(ctx, done) }); err != nil {
			return fmt.Errorf("run-complete hook %d: %w", i+1, err)
		}
	}
	return nil
}

// callCapability runs fn, turning a panic into an error.
func callCapability(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}
