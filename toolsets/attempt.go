package toolsets

import (
	"context"
	"errors"
	"fmt"
)

// This file holds how the registry reads the end of one attempt: which
// kind an error becomes once the attempt's context has ended, whether the
// call is run again, and what is captured of the error for the evidence.

// outcome is how one attempt ended.
type outcome struct {
	val any
	// err is the attempt's error as the registry records it (see
	// attemptError); tool is the error the tool returned (or the
	// recovered panic), kept for the evidence.
	err, tool error
	stack     []byte
}

// attemptError returns err as the registry records the end of an attempt
// whose context is actx. An execution failure (any error that is not one of
// the control-flow types: an ordinary error, context.Canceled or
// context.DeadlineExceeded, wrapped or not) returned after actx ended
// becomes the reason actx ended (see endedError). An error returned while
// actx is still live is kept as it is, whatever it wraps: a tool whose own
// inner deadline passed has failed, it was not timed out.
func attemptError(actx context.Context, err error) error {
	if err == nil || KindOf(err) != KindExecution || actx.Err() == nil {
		return err
	}
	return endedError(actx)
}

// endedError is the error of a call whose context ctx has ended, for the
// reason it ended: the attempt's own timeout (its cause, a *TimeoutError
// naming the limit), the deadline of the caller's context (a *TimeoutError
// with LimitCaller), or a cancellation (a *CancelledError carrying the
// cause).
func endedError(ctx context.Context) error {
	cause := context.Cause(ctx)
	var te *TimeoutError
	if errors.As(cause, &te) {
		return te
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Limit: LimitCaller}
	}
	return &CancelledError{Reason: cause.Error()}
}

// WillRetry reports whether the registry runs the call again after this
// attempt ends with err, ctx being the context the tool was given: err,
// read as the registry reads it (see [Registry]), is an execution failure
// and the retry budget allows another attempt. A wrapper that reports
// retries (the runtime's tool.retried evidence) asks it, so that its report
// and the registry's decision agree.
func (tc *ToolContext) WillRetry(ctx context.Context, err error) bool {
	return err != nil && KindOf(attemptError(ctx, err)).Flags().InternallyRetryable && !tc.LastAttempt()
}

// The private metadata keys of a return built from an error a tool
// returned or a panic (see [Return.CapturedError]).
const (
	// PrivateErrorMessage is the error's message.
	PrivateErrorMessage = "error"
	// PrivateErrorType is its Go type (see [ErrorType]).
	PrivateErrorType = "error_type"
)

// ErrorType returns the Go type of err as weft records it: the type of the
// first error along its Unwrap chain that is not a plain fmt.Errorf
// wrapper, so fmt.Errorf("load: %w", err) of an *fs.PathError gives
// "*fs.PathError"; "" for nil.
func ErrorType(err error) string {
	for err != nil {
		t := fmt.Sprintf("%T", err)
		if next := errors.Unwrap(err); next != nil && t == "*fmt.wrapError" {
			err = next
			continue
		}
		return t
	}
	return ""
}

// capture records the tool's error (or panic) in the return's private
// metadata: its message and its Go type. A panic's type is its value's.
func (ret *Return) capture(err error) {
	if err == nil {
		return
	}
	typ := ErrorType(err)
	if p, ok := err.(*panicError); ok {
		typ = fmt.Sprintf("%T", p.value)
	}
	if ret.PrivateMetadata == nil {
		ret.PrivateMetadata = map[string]any{}
	}
	ret.PrivateMetadata[PrivateErrorMessage] = err.Error()
	ret.PrivateMetadata[PrivateErrorType] = typ
}

// CapturedError returns the Go type and message of the error the tool
// returned (or the panic it raised), as recorded in the return's private
// metadata; ok is false when the return was not built from one. The model
// never sees these: it gets the return's content only.
func (r *Return) CapturedError() (typ, message string, ok bool) {
	typ, ok1 := r.PrivateMetadata[PrivateErrorType].(string)
	message, ok2 := r.PrivateMetadata[PrivateErrorMessage].(string)
	if !ok1 || !ok2 {
		return "", "", false
	}
	return typ, message, true
}
