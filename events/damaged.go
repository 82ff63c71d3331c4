package events

import (
	"errors"
	"fmt"
)

// ErrDamagedStore matches a *DamagedStoreError: the store's own files are
// damaged.
var ErrDamagedStore = errors.New("events: damaged store")

// DamagedStoreError is a read that found the store unable to give back
// what it acknowledged: a gap in a stream's versions, or a stored message
// the backend counts but cannot read (a corrupted block of a file store).
// Reads report it as soon as they meet it instead of waiting for the
// message, and end with it: unlike poison, there is nothing to skip to
// with certainty. It matches ErrDamagedStore with errors.Is.
type DamagedStoreError struct {
	// Stream and Version name the event that cannot be read, when the
	// read knows them (a stream read: the version after the last one it
	// read); they are empty for a global read.
	Stream  string `json:"stream,omitempty"`
	Version uint64 `json:"version,omitempty"`
	// Position is the unreadable message's place in the global order, 0
	// when not known.
	Position uint64 `json:"position,omitempty"`
	Reason   string `json:"reason"`
}

func (e *DamagedStoreError) Error() string {
	s := "damaged store"
	if e.Stream != "" {
		s += fmt.Sprintf(": stream %q version %d", e.Stream, e.Version)
	}
	if e.Position != 0 {
		s += fmt.Sprintf(": position %d", e.Position)
	}
	return s + ": " + e.Reason
}

func (e *DamagedStoreError) Is(target error) bool { return target == ErrDamagedStore }
