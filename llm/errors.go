package llm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNoResponses is returned (inside a *ModelError) by a Scripted model
	// asked for more responses than its script holds.
	ErrNoResponses = errors.New("llm: no scripted responses left")
	// ErrNilResponse is returned (inside a *ModelError) when a model
	// implementation returns neither a response nor an error.
	ErrNilResponse = errors.New("llm: model returned no response and no error")
	// ErrNilRequest is returned (inside a *ModelError) by the models of this
	// package when asked with a nil *Request.
	ErrNilRequest = errors.New("llm: nil request")
	// ErrInvalidMessage reports a message that breaks the rules of the
	// message model: an unknown role, a part in the wrong role, a missing
	// required field, or malformed JSON.
	ErrInvalidMessage = errors.New("llm: invalid message")
	// ErrUnknownPart reports a message part whose kind is not in the
	// catalogue (see PartKind). *UnknownPartError matches it.
	ErrUnknownPart = errors.New("llm: unknown message part kind")
	// ErrInvalidResponse reports a response that breaks the rules of the
	// port: a tool call without an id or name, or duplicate call ids.
	// (Arguments that are not JSON are the model's to correct; see
	// Response.Validate.)
	ErrInvalidResponse = errors.New("llm: invalid response")
	// ErrIncompleteStream reports a stream that ended without an event
	// carrying the final Response.
	ErrIncompleteStream = errors.New("llm: stream ended without a final response")
)

// ModelError is the error type of a model request that failed: which
// provider and model, the provider's status code and error type or code
// when there are some, whether trying again may help, and why. It unwraps
// to its cause, so errors.Is(err, ErrNoResponses) or errors.Is(err,
// context.Canceled) see through it.
//
// Adapters fill it from the provider's answer and never put the API key,
// request headers or the prompt into it: its text reaches run errors and
// logs.
type ModelError struct {
	// Provider names the provider, e.g. "openai" or "anthropic"; empty for
	// the test models of this package.
	Provider string
	// Model is the model's name, e.g. "scripted" or a provider model id.
	Model string
	// StatusCode is the provider's HTTP status code; 0 when there is none
	// (a connection error, a malformed stream, a test model).
	StatusCode int
	// Type and Code are the provider's own error type and code, as it
	// sent them (e.g. "rate_limit_error", "overloaded_error",
	// "context_length_exceeded"); empty when it sent none.
	Type, Code string
	// Retryable says that the same request may succeed if sent again: a
	// rate limit, an overload, a server error or a lost connection. A
	// request the provider refused (400, 401, 403, 404) or a context that
	// ended is not retryable.
	Retryable bool
	// RetryAfter is how long the provider asked to wait before trying
	// again (its Retry-After header); 0 when it did not say.
	RetryAfter time.Duration
	Err        error
}

func (e *ModelError) Error() string {
	var b strings.Builder
	b.WriteString("model ")
	name := e.Model
	if e.Provider != "" {
		name = e.Provider + ":" + e.Model
	}
	b.WriteString(strconv.Quote(name))
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": status %d", e.StatusCode)
	}
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(strings.Trim(e.Type+" "+e.Code, " "))
		b.WriteByte(')')
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *ModelError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is, or wraps, a *ModelError that says
// trying again may help, and how long the provider asked to wait.
func IsRetryable(err error) (retry bool, after time.Duration) {
	var me *ModelError
	if errors.As(err, &me) {
		return me.Retryable, me.RetryAfter
	}
	return false, 0
}

// UnknownPartError is returned when decoding a message part whose kind is
// not in the catalogue. It matches ErrUnknownPart with errors.Is.
type UnknownPartError struct {
	Kind string // the kind as found in the data
}

func (e *UnknownPartError) Error() string {
	return fmt.Sprintf("llm: unknown message part kind %q", e.Kind)
}

// Is reports whether target is ErrUnknownPart.
func (e *UnknownPartError) Is(target error) bool { return target == ErrUnknownPart }
