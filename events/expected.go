package events

import "fmt"

// ExpectedVersion is the condition an Append is made under. It is a closed
// set: Any, NoStream, or Exact(n).
type ExpectedVersion struct {
	kind    expectKind
	version uint64
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectExact
)

var (
	// Any appends whatever the stream's version.
	Any = ExpectedVersion{kind: expectAny}
	// NoStream appends only if the stream has no events.
	NoStream = ExpectedVersion{kind: expectNoStream}
)

// Exact appends only if the stream is at version v (v events stored).
// Exact(0) is the same condition as NoStream.
func Exact(v uint64) ExpectedVersion {
	if v == 0 {
		return NoStream
	}
	return ExpectedVersion{kind: expectExact, version: v}
}

// IsAny reports whether e is Any.
func (e ExpectedVersion) IsAny() bool { return e.kind == expectAny }

// Version returns the version e requires and true, or 0 and false for Any.
// NoStream requires version 0.
func (e ExpectedVersion) Version() (uint64, bool) {
	switch e.kind {
	case expectNoStream:
		return 0, true
	case expectExact:
		return e.version, true
	}
	return 0, false
}

// Matches reports whether a stream at version current satisfies e.
func (e ExpectedVersion) Matches(current uint64) bool {
	v, ok := e.Version()
	return !ok || v == current
}

func (e ExpectedVersion) String() string {
	switch e.kind {
	case expectNoStream:
		return "no-stream"
	case expectExact:
		return fmt.Sprintf("exact(%d)", e.version)
	}
	return "any"
}
