package codemode

import (
	"errors"
	"fmt"
)

// ErrRefused is matched by every error that refuses a program before it
// runs: a source over MaxSource, a syntax or name error, a hidden tool
// named.
var ErrRefused = errors.New("codemode: program refused")

// RefusedError refuses a program before any of it runs.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string        { return "program refused: " + e.Reason }
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// LimitError stops a program that reached one of its limits: "steps",
// "wall time", "output", "memory" or "cancelled".
type LimitError struct {
	Limit  string
	Detail string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the program was stopped: %s limit (%s)", e.Limit, e.Detail)
}

// DivergenceError reports a program whose control flow no longer matches
// its journal: at call Index (from 1) it called Got where the log
// recorded a call of Recorded. The program is not run on: a replay that
// diverged would pair results with the wrong calls.
type DivergenceError struct {
	Index    int
	Recorded string
	Got      string
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("the program diverged from its journal: call %d is %q, but the log recorded %q there", e.Index, e.Got, e.Recorded)
}

// ProgramError is a program that failed while it ran: a runtime error
// of its own, or a tool's error return, which ends the program (Starlark
// has no exception handling). Tool names the tool whose error it is.
type ProgramError struct {
	Message string
	Tool    string
}

func (e *ProgramError) Error() string { return e.Message }
