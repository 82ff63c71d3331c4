package events

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// ErrPoison matches a *PoisonError: a stored message or event that readers
// cannot decode.
var ErrPoison = errors.New("events: poison event")

// PoisonError is a stored message that is not a weft event (not a JSON
// envelope: written by hand, or by something else than a store), or a
// stored event that Decode refuses (a type or schema version outside the
// catalogue, data of another shape: written by an older or newer version).
// Append refuses both (see PrepareAppend), so a PoisonError is always about
// something that reached the log another way.
//
// Readers quarantine it instead of stopping at it: ReadAll and Subscribe
// yield it as a non-final element (see Reader) and go on; ReadStream of
// the stream that holds it fails with it (the stream, a session, is
// damaged); projections record it and skip it. It matches ErrPoison with
// errors.Is and unwraps to its cause.
type PoisonError struct {
	// Stream is the stream the message was stored in ("" when not known).
	Stream string `json:"stream,omitempty"`
	// Version is the event's version in Stream (0 when not known: the
	// message has no readable envelope).
	Version uint64 `json:"version,omitempty"`
	// Position is the message's place in the global order.
	Position uint64 `json:"position"`
	// ID and Type are the event's, when its envelope is readable.
	ID   uuid.UUID `json:"id,omitzero"`
	Type Type      `json:"type,omitempty"`
	// Reason is Err's text, for JSON reports.
	Reason string `json:"reason"`
	Err    error  `json:"-"`
}

// Poison returns the PoisonError of the stored event ev that Decode
// refused with err.
func Poison(ev Event, err error) *PoisonError {
	var e *Error
	if errors.As(err, &e) && e.Op == "decode" {
		err = e.Err
	}
	return &PoisonError{Stream: ev.Stream, Version: ev.Version, Position: ev.Position, ID: ev.ID, Type: ev.Type, Reason: err.Error(), Err: err}
}

// CheckStored returns the *PoisonError of a stored event that Decode
// refuses, nil for one it decodes. Readers that do not decode the data
// themselves call it to quarantine such events.
func CheckStored(ev Event) error {
	if _, err := Decode(ev); err != nil {
		return Poison(ev, err)
	}
	return nil
}

func (e *PoisonError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "poison event at position %d", e.Position)
	if e.Stream != "" {
		fmt.Fprintf(&b, " in stream %q", e.Stream)
	}
	if e.Version != 0 {
		fmt.Fprintf(&b, " version %d", e.Version)
	}
	if e.ID != uuid.Nil {
		fmt.Fprintf(&b, " (id %s, %s)", e.ID, e.Type)
	}
	return b.String() + ": " + e.Reason
}

func (e *PoisonError) Is(target error) bool { return target == ErrPoison }

func (e *PoisonError) Unwrap() error { return e.Err }

// SessionID returns the id of the session whose stream holds the poison,
// "" when it is not a session stream (see SessionStream).
func (e *PoisonError) SessionID() string {
	id, _ := strings.CutPrefix(e.Stream, "session-")
	if id == e.Stream {
		return ""
	}
	return id
}
