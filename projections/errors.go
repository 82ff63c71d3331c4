package projections

import (
	"errors"
	"fmt"

	"github.com/weft-run/weft/events"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrUnexpectedData: an event's Decoded.Data is not the data struct
	// of its type (a Decoded built by hand, not by Decode).
	ErrUnexpectedData = errors.New("projections: event data does not fit its type")
	// ErrNoProjections: a Runner was built without projections.
	ErrNoProjections = errors.New("projections: runner has no projections")
	// ErrUnknownSession: a lookup named a session the view has not seen.
	ErrUnknownSession = errors.New("projections: unknown session")
)

// Error is the error type of the package: what was attempted, by which
// projection, on which event, and why. It unwraps to its cause.
type Error struct {
	Op         string // "decode", "apply", "read", "subscribe", "render"
	Projection string // empty when not about one projection
	Position   uint64 // the event's position, 0 when not about one event
	Type       events.Type
	Err        error
}

func (e *Error) Error() string {
	s := e.Op
	if e.Projection != "" {
		s += " " + e.Projection
	}
	if e.Position != 0 {
		s += fmt.Sprintf(" at position %d (%s)", e.Position, e.Type)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
