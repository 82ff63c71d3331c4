package environment

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/weft-run/weft/toolsets"
)

// The refusals of an environment. Providers return them inside a
// [*PathError] or a [*CommandError]; match them with errors.Is.
var (
	// ErrOutsideRoot: the name leaves the root: ".." above it, an
	// absolute name outside it, or a symbolic link that leads out.
	ErrOutsideRoot = errors.New("environment: path is outside the root")
	// ErrInvalidPath: the name is not a usable path (a NUL byte).
	ErrInvalidPath = errors.New("environment: invalid path")
	// ErrSymlink: a write would go through a symbolic link.
	ErrSymlink = errors.New("environment: writes through symbolic links are refused")
	// ErrNotRegular: the file is a directory, device, pipe or socket
	// where a regular file is needed.
	ErrNotRegular = errors.New("environment: not a regular file")
	// ErrTooLarge: a read or write over the policy's size cap.
	ErrTooLarge = errors.New("environment: over the size cap")
	// ErrDenied: the policy does not allow the operation at all (reads,
	// writes or commands).
	ErrDenied = errors.New("environment: denied by policy")
	// ErrProgramNotAllowed: the program is not in the policy's
	// AllowedPrograms, or the command is a shell script while the policy
	// lists programs.
	ErrProgramNotAllowed = errors.New("environment: program not allowed")
	// ErrProcessLimit: the policy's MaxProcesses commands are running.
	ErrProcessLimit = errors.New("environment: too many commands running")
	// ErrInvalidCommand: a command with neither a script nor an argv, or
	// both.
	ErrInvalidCommand = errors.New("environment: invalid command")
	// ErrNotSupported: the provider cannot do this (a virtual
	// environment without a script for the command).
	ErrNotSupported = errors.New("environment: not supported")
	// ErrNoEnvironment: a toolset found no provider of the kind it needs,
	// neither bound to it nor attached to the run.
	ErrNoEnvironment = errors.New("environment: no environment provider")
)

// PathError is a file operation that failed: which operation, on which
// name (as the caller gave it, never a host path), and why.
type PathError struct {
	Op   string // "read", "write", "stat", "list"
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s %q: %v", e.Op, e.Path, e.Err) }

func (e *PathError) Unwrap() error { return e.Err }

// CommandError is a command refused before it started.
type CommandError struct {
	// Command is the command as [Command.String] renders it.
	Command string
	Err     error
}

func (e *CommandError) Error() string { return fmt.Sprintf("run %q: %v", e.Command, e.Err) }

func (e *CommandError) Unwrap() error { return e.Err }

// refusals are the errors a model can correct, with the codes the
// toolsets record ([Refusal]).
var refusals = []struct {
	err  error
	code string
}{
	{ErrOutsideRoot, "outside_root"},
	{ErrInvalidPath, "invalid_path"},
	{ErrSymlink, "symlink"},
	{ErrNotRegular, "not_regular"},
	{ErrTooLarge, "too_large"},
	{ErrDenied, "denied"},
	{ErrProgramNotAllowed, "program_not_allowed"},
	{ErrProcessLimit, "process_limit"},
	{ErrInvalidCommand, "invalid_command"},
	{ErrNotSupported, "not_supported"},
	{fs.ErrNotExist, "not_found"},
	{fs.ErrExist, "exists"},
}

// Refusal returns the code of err when it is a refusal the model can act
// on ("outside_root", "too_large", "not_found", …), and false for any
// other error (an I/O failure).
func Refusal(err error) (string, bool) {
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return r.code, true
		}
	}
	return "", false
}

// MetaRefused is the key of the refusal code ([Refusal]) in the metadata
// of a tool return that reports a refusal.
const MetaRefused = "refused"

// ToolError is how the environment toolsets return a provider's error:
// a refusal becomes feedback the model can act on (its message, with the
// code under [MetaRefused]), so the model may correct the path or the
// command; any other error is returned as it is (an execution failure,
// or a timeout or cancellation when the call's context ended).
func ToolError(err error) error {
	if code, ok := Refusal(err); ok {
		return &toolsets.FeedbackError{Message: err.Error(), Metadata: map[string]any{MetaRefused: code}}
	}
	return err
}
