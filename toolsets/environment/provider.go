package environment

import (
	"context"
	"io/fs"
	"strings"
	"time"
)

// FileSystem is the file side of an environment. Names are relative to
// the provider's root (see the package documentation, Paths). Every
// method checks ctx before it starts, is safe for concurrent use, and
// returns its failures as a [*PathError] naming the operation and the
// name as given; refusals unwrap to the sentinels of this package, a
// missing file to fs.ErrNotExist.
type FileSystem interface {
	// FilePolicy returns the policy the provider enforces. It does not
	// block.
	FilePolicy() FilePolicy
	// Stat describes name, following symbolic links that stay inside
	// the root.
	Stat(ctx context.Context, name string) (FileInfo, error)
	// ReadDir lists the directory name, sorted by name. An entry that is
	// a symbolic link is reported as one (its Mode has fs.ModeSymlink)
	// and is not followed.
	ReadDir(ctx context.Context, name string) ([]FileInfo, error)
	// ReadFile returns the content of the regular file name. It fails
	// with [ErrDenied] when the policy denies reads, [ErrNotRegular] for
	// a directory, device, pipe or socket, and [ErrTooLarge] when the
	// file holds more than the policy's read cap.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// WriteFile replaces (or creates) the regular file name with data,
	// creating missing parent directories. It fails with [ErrDenied] when
	// the policy denies writes, [ErrTooLarge] past the write cap,
	// [ErrSymlink] when name or one of its parents is a symbolic link,
	// and [ErrNotRegular] when name exists and is not a regular file. A
	// reader sees the old content or the new, never a mix.
	WriteFile(ctx context.Context, name string, data []byte) (WriteInfo, error)
}

// Shell is the command side of an environment.
type Shell interface {
	// ShellPolicy returns the policy the provider enforces. It does not
	// block.
	ShellPolicy() ShellPolicy
	// Run runs cmd and returns when it and every process it started in
	// its process group have ended. It blocks.
	//
	// A command that ran returns its result and a nil error, whatever its
	// exit code; one that ran past its timeout is killed (with its
	// process group) and returns its partial output with TimedOut set.
	// When ctx ends first, the process group is killed and Run returns
	// ctx's error. A command refused before it started returns a
	// [*CommandError]: [ErrDenied], [ErrProgramNotAllowed],
	// [ErrProcessLimit], [ErrNotSupported], or a path error for its
	// directory.
	Run(ctx context.Context, cmd Command) (CommandResult, error)
}

// Provider is an environment with both sides, as the seed's
// EnvironmentProvider.
type Provider interface {
	FileSystem
	Shell
}

// FileInfo describes a file of an environment.
type FileInfo struct {
	// Name is the base name ("main.go"); "." for the root.
	Name string `json:"name"`
	// Size is the length in bytes of a regular file.
	Size int64 `json:"size"`
	// Mode holds the type bits (fs.ModeDir, fs.ModeSymlink, …) and the
	// permissions.
	Mode fs.FileMode `json:"mode"`
	// ModTime is the last modification time (the zero time on the
	// virtual provider).
	ModTime time.Time `json:"mod_time,omitzero"`
}

// IsDir reports whether the entry is a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

// Type returns "file", "dir", "symlink" or "other" (devices, pipes,
// sockets).
func (fi FileInfo) Type() string {
	switch {
	case fi.Mode.IsRegular():
		return "file"
	case fi.Mode.IsDir():
		return "dir"
	case fi.Mode&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// WriteInfo is what a write replaced.
type WriteInfo struct {
	// Created reports that name did not exist before the write.
	Created bool
	// PreviousSize and PreviousSHA256 describe the content the write
	// replaced (zero when Created).
	PreviousSize   int64
	PreviousSHA256 string
}

// Command is one command to run in an environment's root. Exactly one of
// Script and Argv is set.
type Command struct {
	// Script is a shell script, run by the policy's shell ("/bin/sh -c").
	// A policy with AllowedPrograms refuses it.
	Script string `json:"script,omitempty"`
	// Argv is a program and its arguments, run without a shell. A bare
	// program name is looked up in PATH.
	Argv []string `json:"argv,omitempty"`
	// Dir is the working directory, relative to the root ("" for the
	// root).
	Dir string `json:"dir,omitempty"`
	// Timeout bounds the command; 0 means the policy's Timeout, and any
	// value is capped at the policy's MaxTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// String renders the command for a person: the script, or the argv
// joined by spaces.
func (c Command) String() string {
	if c.Script != "" {
		return c.Script
	}
	return strings.Join(c.Argv, " ")
}

// CommandResult is what a command that ran produced.
type CommandResult struct {
	// ExitCode is the process's exit status; -1 when it was killed (a
	// timeout) or ended by a signal.
	ExitCode int
	// Stdout and Stderr are the first MaxOutputBytes of each stream;
	// StdoutDropped and StderrDropped count the bytes past the cap.
	Stdout        []byte
	Stderr        []byte
	StdoutDropped int64
	StderrDropped int64
	// TimedOut reports that the command ran past its timeout and was
	// killed with its process group.
	TimedOut bool
	// Timeout is the timeout the command ran under.
	Timeout time.Duration
	// Duration is how long it ran.
	Duration time.Duration
}
