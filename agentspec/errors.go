package agentspec

import (
	"errors"
	"fmt"
)

// ErrSpec is matched (errors.Is) by every *Error: a spec file that cannot
// be loaded or registered.
var ErrSpec = errors.New("agentspec: invalid agent spec")

// Error is what is wrong with a spec file, and where: the file, the line
// (1-based; 0 when the file has none, an empty file) and the field, as a
// path from the document's root ("agents[0].model.api_key_env"). Its text
// never holds a secret: an environment variable is named, never read
// back.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
	// Err is the cause, when another package reported it.
	Err error
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches ErrSpec.
func (e *Error) Is(target error) bool { return target == ErrSpec }
