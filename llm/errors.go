package llm

import (
	"errors"
	"fmt"
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

// ModelError is the error type of a model request that failed: which model,
// the provider's status code when there is one, and why. It unwraps to its
// cause, so errors.Is(err, ErrNoResponses) or errors.Is(err,
// context.Canceled) see through it.
type ModelError struct {
	Model      string // the model's name, e.g. "scripted" or a provider model id
	StatusCode int    // the provider's status code; 0 when there is none
	Err        error
}

func (e *ModelError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("model %q: status %d: %v", e.Model, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("model %q: %v", e.Model, e.Err)
}

func (e *ModelError) Unwrap() error { return e.Err }

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
