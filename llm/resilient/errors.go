package resilient

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weft-run/weft/llm"
)

// Sentinel errors callers branch on with errors.Is. Each is matched by the
// typed error of the same name; every wrapper returns them inside a
// *llm.ModelError, as the llm.Model port asks.
var (
	// ErrExhausted matches the error of a request Retry gave up on because
	// its budget (attempts or elapsed time) ran out: *ExhaustedError.
	ErrExhausted = errors.New("resilient: retry budget exhausted")
	// ErrAllFailed matches the error of a request every model of a
	// Fallback failed: *FallbackError.
	ErrAllFailed = errors.New("resilient: every fallback model failed")
	// ErrTooLarge matches the error of a request a Limiter refuses because
	// its token estimate exceeds the whole per-minute token budget:
	// *TooLargeError.
	ErrTooLarge = errors.New("resilient: request exceeds the per-minute token budget")
)

// ExhaustedError is the cause (llm.ModelError.Err) of a request Retry gave
// up on: every attempt failed with a retryable error and the budget ran
// out. The *llm.ModelError around it keeps the last attempt's provider,
// model, status, type, code, Retryable and RetryAfter; Last is that
// attempt's error, so errors.As and errors.Is see through to it.
type ExhaustedError struct {
	// Attempts is how many times the request was sent.
	Attempts int
	// Elapsed is the time from the first attempt's start to giving up.
	Elapsed time.Duration
	// Last is the last attempt's error.
	Last error
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("gave up after %s: %v", attempts(e.Attempts), causeText(e.Last))
}

func (e *ExhaustedError) Unwrap() error { return e.Last }

// Is reports whether target is ErrExhausted.
func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// FallbackError is the cause (llm.ModelError.Err) of a request every model
// of a Fallback failed, or that the context ended before the list was
// through. Errs holds each tried model's error, in the order tried; their
// texts are the models' own (adapters keep keys and prompts out of them),
// and nothing is added but the count.
type FallbackError struct {
	Errs []error
	// Ended is the context's error when the context ended before every
	// model was tried; nil otherwise.
	Ended error
	// Models is the number of models in the list.
	Models int
}

func (e *FallbackError) Error() string {
	var b strings.Builder
	if e.Ended != nil {
		fmt.Fprintf(&b, "%v after %d of %d models failed", e.Ended, len(e.Errs), e.Models)
	} else {
		fmt.Fprintf(&b, "all %d models failed", len(e.Errs))
	}
	for i, err := range e.Errs {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s[%d] %v", sep, i+1, err)
	}
	return b.String()
}

// Unwrap returns each model's error, and the context's error last when it
// ended the request.
func (e *FallbackError) Unwrap() []error {
	if e.Ended == nil {
		return e.Errs
	}
	return append(e.Errs[:len(e.Errs):len(e.Errs)], e.Ended)
}

// Is reports whether target is ErrAllFailed (when every model was tried).
func (e *FallbackError) Is(target error) bool { return target == ErrAllFailed && e.Ended == nil }

// TooLargeError is the cause (llm.ModelError.Err) of a request a Limiter
// refuses at once: its token estimate alone exceeds the per-minute token
// budget, so no wait could admit it.
type TooLargeError struct {
	Estimate int64 // the request's estimated tokens
	Budget   int64 // the limiter's tokens per minute
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("request of about %d tokens exceeds the rate limit of %d tokens per minute", e.Estimate, e.Budget)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// causeText is the text of err without the provider and model prefix a
// *llm.ModelError prints, for an error wrapped in a copy of it.
func causeText(err error) string {
	if me, ok := err.(*llm.ModelError); ok && me.Err != nil {
		return me.Err.Error()
	}
	return fmt.Sprint(err)
}

// modelError returns a *llm.ModelError of the wrapped model named name
// ("provider:model" or a bare name) with cause err.
func modelError(name string, err error) *llm.ModelError {
	provider, model, ok := strings.Cut(name, ":")
	if !ok {
		provider, model = "", name
	}
	return &llm.ModelError{Provider: provider, Model: model, Err: err}
}

// attempts is "1 attempt" or "n attempts".
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}
