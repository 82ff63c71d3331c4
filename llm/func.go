package llm

import (
	"context"
	"errors"
)

// FuncName is the model name a Func reports when its response does not
// name one.
const FuncName = "func"

// Func is a model whose answers a Go function decides, for example from the
// last tool return in the request. The function must be safe for
// concurrent use if the model is used concurrently, and must not modify
// req.
//
// Request fills the zero fields of the function's response as Scripted
// does (Model is FuncName, a FinishReason from the tool calls, Usage from
// EstimateUsage), on a copy. An error the function returns is wrapped in a
// *ModelError unless it already is one; a nil response with a nil error
// is a *ModelError matching ErrNilResponse. The function is not called
// when ctx is already done or req is nil.
type Func func(ctx context.Context, req *Request) (*Response, error)

var _ Model = Func(nil)

// Request calls f. See Func for the rules.
func (f Func) Request(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, &ModelError{Model: FuncName, Err: ErrNilRequest}
	}
	if err := ctx.Err(); err != nil {
		return nil, &ModelError{Model: FuncName, Err: err}
	}
	resp, err := f(ctx, req)
	if err != nil {
		if _, ok := errors.AsType[*ModelError](err); ok {
			return nil, err
		}
		return nil, &ModelError{Model: FuncName, Err: err}
	}
	if resp == nil {
		return nil, &ModelError{Model: FuncName, Err: ErrNilResponse}
	}
	resp = resp.Clone()
	fillDefaults(req, resp, FuncName)
	return resp, nil
}

// ModelName returns FuncName, the name its responses carry unless the
// function names another.
func (Func) ModelName() string { return FuncName }
