package environment

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Policy defaults, used where a policy leaves a field zero.
const (
	DefaultMaxReadBytes   = 8 << 20 // 8 MiB per read
	DefaultMaxWriteBytes  = 8 << 20 // 8 MiB per write
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxOutputBytes = 1 << 20 // 1 MiB per stream
	DefaultMaxProcesses   = 4
)

// FilePolicy bounds what a provider's [FileSystem] does. The zero value
// allows reads and writes with the default caps; the toolsets still gate
// writes behind approval by default.
type FilePolicy struct {
	// DenyRead refuses every read (ReadFile; Stat and ReadDir stay
	// allowed, so a tree can be listed).
	DenyRead bool
	// DenyWrite refuses every write: a read-only environment.
	DenyWrite bool
	// MaxReadBytes caps one read; a larger file is refused with
	// [ErrTooLarge]. 0 means [DefaultMaxReadBytes].
	MaxReadBytes int64
	// MaxWriteBytes caps one write. 0 means [DefaultMaxWriteBytes].
	MaxWriteBytes int64
}

// Validate rejects negative caps.
func (p FilePolicy) Validate() error {
	if p.MaxReadBytes < 0 || p.MaxWriteBytes < 0 {
		return fmt.Errorf("environment: file policy: negative size cap (read %d, write %d)", p.MaxReadBytes, p.MaxWriteBytes)
	}
	return nil
}

// ReadLimit is the read cap in effect.
func (p FilePolicy) ReadLimit() int64 { return orDefault(p.MaxReadBytes, DefaultMaxReadBytes) }

// WriteLimit is the write cap in effect.
func (p FilePolicy) WriteLimit() int64 { return orDefault(p.MaxWriteBytes, DefaultMaxWriteBytes) }

// CheckRead refuses a read of size bytes the policy does not allow.
func (p FilePolicy) CheckRead(size int64) error {
	if p.DenyRead {
		return fmt.Errorf("%w: reads are not allowed", ErrDenied)
	}
	if size > p.ReadLimit() {
		return fmt.Errorf("%w: the file holds %d bytes, the read cap is %d", ErrTooLarge, size, p.ReadLimit())
	}
	return nil
}

// CheckWrite refuses a write of size bytes the policy does not allow.
func (p FilePolicy) CheckWrite(size int64) error {
	if p.DenyWrite {
		return fmt.Errorf("%w: writes are not allowed", ErrDenied)
	}
	if size > p.WriteLimit() {
		return fmt.Errorf("%w: %d bytes to write, the write cap is %d", ErrTooLarge, size, p.WriteLimit())
	}
	return nil
}

// ShellPolicy bounds what a provider's [Shell] runs. The zero value runs
// any program or script with the default limits and a minimal
// environment (see Env); the shell toolset still gates commands behind
// approval by default.
type ShellPolicy struct {
	// Deny refuses every command.
	Deny bool
	// AllowedPrograms, when not empty, are the only programs a command
	// may run: argv[0] must equal one of them exactly (a bare name is
	// looked up in PATH; a path must be listed as that path), and shell
	// scripts are refused, since a script can run anything. Listing a
	// shell ("sh") allows it as a program, with that risk.
	AllowedPrograms []string
	// Timeout is a command's timeout when it asks for none; 0 means
	// [DefaultTimeout].
	Timeout time.Duration
	// MaxTimeout caps the timeout a command asks for; 0 means
	// [DefaultMaxTimeout] (or Timeout, when that is larger).
	MaxTimeout time.Duration
	// MaxOutputBytes caps what is kept of each of stdout and stderr;
	// the rest is counted and dropped. 0 means [DefaultMaxOutputBytes].
	MaxOutputBytes int64
	// MaxProcesses caps the commands running at once on the provider; a
	// command past it is refused with [ErrProcessLimit]. 0 means
	// [DefaultMaxProcesses].
	MaxProcesses int
	// Shell runs scripts: the program and its arguments before the
	// script. Empty means {"/bin/sh", "-c"}.
	Shell []string
	// Env is the environment of every command ("NAME=value"), after
	// PATH and HOME (the root) and the variables InheritEnv names.
	// Nothing else of the host process's environment reaches a command,
	// so its credentials do not.
	Env []string
	// InheritEnv names host environment variables passed through as they
	// are ("GOPATH", "LANG").
	InheritEnv []string
}

// Validate rejects negative limits and blank program names.
func (p ShellPolicy) Validate() error {
	if p.Timeout < 0 || p.MaxTimeout < 0 || p.MaxOutputBytes < 0 || p.MaxProcesses < 0 {
		return fmt.Errorf("environment: shell policy: negative limit")
	}
	if slices.ContainsFunc(p.AllowedPrograms, func(s string) bool { return strings.TrimSpace(s) == "" }) {
		return fmt.Errorf("environment: shell policy: blank entry in AllowedPrograms")
	}
	for _, kv := range p.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("environment: shell policy: Env entry %q is not NAME=value", kv)
		}
	}
	return nil
}

// OutputLimit is the per-stream output cap in effect.
func (p ShellPolicy) OutputLimit() int64 { return orDefault(p.MaxOutputBytes, DefaultMaxOutputBytes) }

// ProcessLimit is the concurrent command cap in effect.
func (p ShellPolicy) ProcessLimit() int {
	return int(orDefault(int64(p.MaxProcesses), DefaultMaxProcesses))
}

// ShellArgv is the shell that runs scripts.
func (p ShellPolicy) ShellArgv() []string {
	if len(p.Shell) == 0 {
		return []string{"/bin/sh", "-c"}
	}
	return slices.Clone(p.Shell)
}

// TimeoutFor returns the timeout of a command that asks for requested
// (0: none).
func (p ShellPolicy) TimeoutFor(requested time.Duration) time.Duration {
	def := time.Duration(orDefault(int64(p.Timeout), int64(DefaultTimeout)))
	ceiling := time.Duration(orDefault(int64(p.MaxTimeout), int64(max(DefaultMaxTimeout, def))))
	d := requested
	if d <= 0 {
		d = def
	}
	return min(d, ceiling)
}

// Check refuses a command the policy does not allow, before it starts:
// [ErrDenied] when commands are denied, [ErrProgramNotAllowed] for a
// program outside AllowedPrograms or any script while AllowedPrograms is
// set. It also refuses a malformed command (neither or both of Script
// and Argv). Its errors are [*CommandError]s.
func (p ShellPolicy) Check(cmd Command) error {
	fail := func(err error) error { return &CommandError{Command: cmd.String(), Err: err} }
	switch {
	case p.Deny:
		return fail(fmt.Errorf("%w: commands are not allowed", ErrDenied))
	case cmd.Script != "" && len(cmd.Argv) > 0:
		return fail(fmt.Errorf("%w: a command has a script or an argv, not both", ErrInvalidCommand))
	case cmd.Script == "" && (len(cmd.Argv) == 0 || cmd.Argv[0] == ""):
		return fail(fmt.Errorf("%w: empty command", ErrInvalidCommand))
	case len(p.AllowedPrograms) == 0:
		return nil
	case cmd.Script != "":
		return fail(fmt.Errorf("%w: shell scripts are refused while the policy lists programs; run one of %s with argv", ErrProgramNotAllowed, strings.Join(p.AllowedPrograms, ", ")))
	case !slices.Contains(p.AllowedPrograms, cmd.Argv[0]):
		return fail(fmt.Errorf("%w: %q is not one of %s", ErrProgramNotAllowed, cmd.Argv[0], strings.Join(p.AllowedPrograms, ", ")))
	}
	return nil
}

func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}
