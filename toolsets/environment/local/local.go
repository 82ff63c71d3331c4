// Package local is the environment provider of a host directory: a
// filesystem confined to that directory and a shell that runs commands
// in it.
//
//	env, err := local.New("/srv/checkout", local.WithShellPolicy(environment.ShellPolicy{
//		AllowedPrograms: []string{"go", "git"},
//	}))
//	defer env.Close()
//
// # Confinement
//
// Every file operation goes through an os.Root opened on the directory,
// which resolves each path component relative to the directory it is in
// and never follows a symbolic link out of the root, also when a link is
// swapped in between a check and a use. So ".." above the root, an
// absolute path outside it and a link that leads out of it are refused
// with environment.ErrOutsideRoot. Reads of anything but a regular file
// (devices, pipes, sockets) are refused with environment.ErrNotRegular,
// and are opened without blocking, so a FIFO cannot hang a read. Writes
// refuse a name that is a symbolic link, or whose parent directories
// include one, with environment.ErrSymlink; a write goes to a new
// temporary file that is then renamed over the name, so it replaces a
// link swapped in at the last moment instead of writing through it, and
// a reader sees the old content or the new.
//
// The shell is not a sandbox: a command runs with the rights of the weft
// process, and may cd out of the root. Its policy is what bounds it: the
// programs it may run, its timeout and output, how many run at once, and
// an environment that holds only PATH, HOME (the root) and what the
// policy adds, so the host's credentials do not reach it.
//
// # Platforms
//
// On Linux a command runs as its own process group; on timeout or
// cancellation, and when it exits, the whole group is killed (SIGKILL),
// so children and grandchildren it left running do not survive it. The
// leader is not reaped until the group has been signalled, so the group
// id cannot have been reused. Other Unix systems do the same, but reap
// the leader before they signal the group. Elsewhere (Windows) the file
// side works as described and Run refuses every command with
// environment.ErrNotSupported.
package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/weft-run/weft/toolsets/environment"
)

// Option configures [New].
type Option func(*Provider)

// WithFilePolicy sets the file policy.
func WithFilePolicy(p environment.FilePolicy) Option {
	return func(l *Provider) { l.files = p }
}

// WithShellPolicy sets the shell policy.
func WithShellPolicy(p environment.ShellPolicy) Option {
	return func(l *Provider) { l.shell = p }
}

// Provider is the environment of one host directory. It is safe for
// concurrent use; Close releases the directory.
type Provider struct {
	path  string // the root's absolute host path
	root  *os.Root
	files environment.FilePolicy
	shell environment.ShellPolicy
	// escapes is the error os.Root gives a path that leaves the root; it
	// is not exported by package os, so New reads it from the root.
	escapes error
	// slots holds one token per running command.
	slots chan struct{}
}

var _ environment.Provider = (*Provider)(nil)

// New returns the provider of the directory dir, which must exist. It
// fails on invalid policies.
func New(dir string, opts ...Option) (*Provider, error) {
	l := &Provider{}
	for _, o := range opts {
		o(l)
	}
	if err := l.files.Validate(); err != nil {
		return nil, err
	}
	if err := l.shell.Validate(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local: root: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("local: root: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("local: root: %w", err)
	}
	_, err = root.Lstat("..")
	var pe *os.PathError
	if !errors.As(err, &pe) {
		root.Close()
		return nil, fmt.Errorf("local: root %q: the platform does not confine paths to the root (Lstat(\"..\") gave %v)", abs, err)
	}
	l.path, l.root, l.escapes = abs, root, pe.Err
	l.slots = make(chan struct{}, l.shell.ProcessLimit())
	return l, nil
}

// Root returns the root's absolute host path (links resolved).
func (l *Provider) Root() string { return l.path }

// Close releases the root directory. Operations after Close fail.
func (l *Provider) Close() error { return l.root.Close() }

// FilePolicy returns the file policy.
func (l *Provider) FilePolicy() environment.FilePolicy { return l.files }

// ShellPolicy returns the shell policy.
func (l *Provider) ShellPolicy() environment.ShellPolicy { return l.shell }

// fail turns an error of package os into an environment.PathError that
// names name, never the host path, and says when the path left the root.
func (l *Provider) fail(op, name string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	switch {
	case errors.Is(err, l.escapes):
		err = environment.ErrOutsideRoot
	case op == "write" && errors.Is(err, syscall.ELOOP):
		// os.Root met a link where it does not follow one: a link
		// swapped in on the way to a write.
		err = fmt.Errorf("%w: %w", environment.ErrSymlink, err)
	}
	return &environment.PathError{Op: op, Path: name, Err: err}
}
