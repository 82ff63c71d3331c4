package events

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on with errors.Is.
var (
	ErrWrongExpectedVersion = errors.New("events: wrong expected version")
	ErrStreamNotFound       = errors.New("events: stream not found")
	ErrPayloadTooLarge      = errors.New("events: payload too large")
	ErrInvalidStream        = errors.New("events: invalid stream name")
	ErrInvalidEvent         = errors.New("events: invalid event")
	ErrEmptyAppend          = errors.New("events: append of no events")
	ErrClosed               = errors.New("events: store closed")

	// Decoding errors (see Decode).
	ErrUnknownType          = errors.New("events: unknown event type")
	ErrUnknownSchemaVersion = errors.New("events: unknown schema version")
	ErrMalformed            = errors.New("events: malformed event data")
)

// Error is the error type of the events subsystem: what was attempted, on
// which stream, and why. It unwraps to its cause (often a sentinel above).
type Error struct {
	Op     string // "append", "read stream", "read all", "subscribe", "decode", …
	Stream string // empty when not about one stream
	Err    error
}

func (e *Error) Error() string {
	if e.Stream == "" {
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s %q: %v", e.Op, e.Stream, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// WrongVersionError is returned by Append when the stream is not at the
// expected version. It matches ErrWrongExpectedVersion with errors.Is.
type WrongVersionError struct {
	Stream   string
	Expected ExpectedVersion
	Actual   uint64 // the stream's version when the append was refused
}

func (e *WrongVersionError) Error() string {
	return fmt.Sprintf("append to %q: wrong expected version: expected %v, stream is at %d", e.Stream, e.Expected, e.Actual)
}

func (e *WrongVersionError) Is(target error) bool { return target == ErrWrongExpectedVersion }
