// Package virtual is an in-memory environment provider: files held in a
// map, and optional scripted shell outputs, as the seed's
// EnvironmentProvider.virtual(files=...). It is for tests, examples and
// dry runs: nothing touches the host.
//
//	env, err := virtual.New(virtual.Files{"README.md": "hello"})
//
// Paths follow the rules of package environment with "/" as the root.
// Directories exist implicitly (a directory is any prefix of a file's
// path); there are no symbolic links and no devices. The file and shell
// policies apply as they do on the local provider. A command runs only
// when it was scripted ([WithCommand]); any other is refused with
// environment.ErrNotSupported. Scripted commands change no files.
package virtual

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/weft-run/weft/toolsets/environment"
)

// Files is the initial content of a virtual environment: path → content.
type Files map[string]string

// Output is the scripted result of a command.
type Output struct {
	ExitCode int
	Stdout   string
	Stderr   string
}

// Option configures [New].
type Option func(*Provider)

// WithFilePolicy sets the file policy.
func WithFilePolicy(p environment.FilePolicy) Option {
	return func(v *Provider) { v.files = p }
}

// WithShellPolicy sets the shell policy.
func WithShellPolicy(p environment.ShellPolicy) Option {
	return func(v *Provider) { v.shell = p }
}

// WithCommand scripts the output of a command: a script (Command.Script)
// or an argv joined by single spaces (Command.String), matched exactly.
func WithCommand(command string, out Output) Option {
	return func(v *Provider) { v.script[command] = out }
}

// Provider is the in-memory environment. It is safe for concurrent use.
type Provider struct {
	files  environment.FilePolicy
	shell  environment.ShellPolicy
	script map[string]Output

	mu   sync.RWMutex
	data map[string][]byte
}

var _ environment.Provider = (*Provider)(nil)

// New returns a virtual environment holding files. It fails on a path
// that leaves the root, on two paths where one is the other's directory,
// and on invalid policies.
func New(files Files, opts ...Option) (*Provider, error) {
	v := &Provider{script: map[string]Output{}, data: map[string][]byte{}}
	for _, o := range opts {
		o(v)
	}
	if err := v.files.Validate(); err != nil {
		return nil, err
	}
	if err := v.shell.Validate(); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		c, err := environment.Clean("/", name)
		if err == nil && c == "." {
			err = environment.ErrNotRegular
		}
		if err == nil {
			err = v.placeable(c)
		}
		if err != nil {
			return nil, fmt.Errorf("virtual: file %q: %w", name, err)
		}
		v.data[c] = []byte(files[name])
	}
	return v, nil
}

// FilePolicy returns the file policy.
func (v *Provider) FilePolicy() environment.FilePolicy { return v.files }

// ShellPolicy returns the shell policy.
func (v *Provider) ShellPolicy() environment.ShellPolicy { return v.shell }

// Files returns a copy of the current files.
func (v *Provider) Files() Files {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make(Files, len(v.data))
	for k, b := range v.data {
		out[k] = string(b)
	}
	return out
}

func pathErr(op, name string, err error) error {
	return &environment.PathError{Op: op, Path: name, Err: err}
}

// clean checks ctx and name.
func clean(ctx context.Context, op, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", pathErr(op, name, err)
	}
	c, err := environment.Clean("/", name)
	if err != nil {
		return "", pathErr(op, name, err)
	}
	return c, nil
}

// isDir reports whether c is the root or a prefix directory of a file.
// The caller holds mu.
func (v *Provider) isDir(c string) bool {
	if c == "." {
		return true
	}
	for k := range v.data {
		if strings.HasPrefix(k, c+"/") {
			return true
		}
	}
	return false
}

// placeable reports whether a file may be at c: c is no directory, and
// no parent of c is a file. The caller holds mu (or owns v).
func (v *Provider) placeable(c string) error {
	if v.isDir(c) {
		return environment.ErrNotRegular
	}
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		if _, ok := v.data[d]; ok {
			return fmt.Errorf("%w: %q is a file", fs.ErrExist, d)
		}
	}
	return nil
}

// Stat describes name.
func (v *Provider) Stat(ctx context.Context, name string) (environment.FileInfo, error) {
	c, err := clean(ctx, "stat", name)
	if err != nil {
		return environment.FileInfo{}, err
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	if b, ok := v.data[c]; ok {
		return environment.FileInfo{Name: path.Base(c), Size: int64(len(b)), Mode: 0o644}, nil
	}
	if v.isDir(c) {
		return environment.FileInfo{Name: path.Base(c), Mode: fs.ModeDir | 0o755}, nil
	}
	return environment.FileInfo{}, pathErr("stat", name, fs.ErrNotExist)
}

// ReadDir lists the directory name.
func (v *Provider) ReadDir(ctx context.Context, name string) ([]environment.FileInfo, error) {
	c, err := clean(ctx, "list", name)
	if err != nil {
		return nil, err
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	if _, ok := v.data[c]; ok {
		return nil, pathErr("list", name, fmt.Errorf("%w: a file, not a directory", environment.ErrNotRegular))
	}
	if !v.isDir(c) {
		return nil, pathErr("list", name, fs.ErrNotExist)
	}
	prefix := c + "/"
	if c == "." {
		prefix = ""
	}
	seen := map[string]environment.FileInfo{}
	for k, b := range v.data {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if first, _, nested := strings.Cut(rest, "/"); nested {
			seen[first] = environment.FileInfo{Name: first, Mode: fs.ModeDir | 0o755}
		} else {
			seen[rest] = environment.FileInfo{Name: rest, Size: int64(len(b)), Mode: 0o644}
		}
	}
	out := make([]environment.FileInfo, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return out, nil
}

// ReadFile returns the content of name.
func (v *Provider) ReadFile(ctx context.Context, name string) ([]byte, error) {
	c, err := clean(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	b, ok := v.data[c]
	if !ok {
		if v.isDir(c) {
			return nil, pathErr("read", name, fmt.Errorf("%w: a directory", environment.ErrNotRegular))
		}
		return nil, pathErr("read", name, fs.ErrNotExist)
	}
	if err := v.files.CheckRead(int64(len(b))); err != nil {
		return nil, pathErr("read", name, err)
	}
	return slices.Clone(b), nil
}

// WriteFile replaces or creates name.
func (v *Provider) WriteFile(ctx context.Context, name string, data []byte) (environment.WriteInfo, error) {
	c, err := clean(ctx, "write", name)
	if err != nil {
		return environment.WriteInfo{}, err
	}
	if err := v.files.CheckWrite(int64(len(data))); err != nil {
		return environment.WriteInfo{}, pathErr("write", name, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c == "." {
		return environment.WriteInfo{}, pathErr("write", name, environment.ErrNotRegular)
	}
	if err := v.placeable(c); err != nil {
		return environment.WriteInfo{}, pathErr("write", name, err)
	}
	info := environment.WriteInfo{Created: true}
	if old, ok := v.data[c]; ok {
		info = environment.WriteInfo{PreviousSize: int64(len(old)), PreviousSHA256: environment.SHA256(old)}
	}
	v.data[c] = slices.Clone(data)
	return info, nil
}

// Run answers cmd from the script, under the shell policy: a command
// that was not scripted is refused with environment.ErrNotSupported.
func (v *Provider) Run(ctx context.Context, cmd environment.Command) (environment.CommandResult, error) {
	if err := v.shell.Check(cmd); err != nil {
		return environment.CommandResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return environment.CommandResult{}, err
	}
	if cmd.Dir != "" {
		if _, err := environment.Clean("/", cmd.Dir); err != nil {
			return environment.CommandResult{}, &environment.CommandError{Command: cmd.String(), Err: pathErr("dir", cmd.Dir, err)}
		}
	}
	out, ok := v.script[cmd.String()]
	if !ok {
		return environment.CommandResult{}, &environment.CommandError{Command: cmd.String(),
			Err: fmt.Errorf("%w: the virtual environment has no shell, and this command was not scripted", environment.ErrNotSupported)}
	}
	res := environment.CommandResult{ExitCode: out.ExitCode, Timeout: v.shell.TimeoutFor(cmd.Timeout)}
	stdout, stderr := environment.NewCapture(v.shell.OutputLimit()), environment.NewCapture(v.shell.OutputLimit())
	_, _ = stdout.Write([]byte(out.Stdout))
	_, _ = stderr.Write([]byte(out.Stderr))
	res.Stdout, res.StdoutDropped = stdout.Result()
	res.Stderr, res.StderrDropped = stderr.Result()
	return res, nil
}
