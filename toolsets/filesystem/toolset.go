// Package filesystem is the filesystem toolset of an environment (the
// seed's filesystem_toolset()): read, write, edit, list, glob and grep
// over an [environment.FileSystem].
//
//	env, _ := virtual.New(virtual.Files{"README.md": "hello"})
//	fs, _ := filesystem.New()
//	agent, _ := rt.NewAgent("coder", weft.AgentConfig{Model: m, Environment: env, Toolsets: []toolsets.Toolset{fs}})
//
// The toolset uses the provider bound to it ([WithProvider]) or, without
// one, the environment attached to the run (weft.AgentConfig's
// Environment, [toolsets.ToolsetContext.Environment]); a run with
// neither fails its preparation with [environment.ErrNoEnvironment].
//
// Paths are the provider's: relative to its root, confined to it. What
// the provider refuses (a path out of the root, a link, a device, a size
// cap, a policy denial, a missing file) reaches the model as feedback
// with the refusal's code under [environment.MetaRefused], not as an
// error, so it can correct the call. So does an edit whose old text is
// missing or ambiguous.
//
// The read tools (read_file, list_directory, glob, grep) are
// concurrent-safe; the mutating ones (write_file, edit_file) are
// sequential and, unless the toolset is built [WithoutApproval], wait for
// a human approval before they run (the toolsets.RequireApproval gate:
// their definitions carry toolsets.MetaApprovalRequired). A provider
// whose policy denies writes gets no mutating tools, and one that denies
// reads no read_file, grep or edit_file. Every write and edit records an
// [environment.Effect] (path, size, SHA-256, what it replaced, and the
// session, run and call) in its return's metadata.
package filesystem

import (
	"fmt"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
)

// The tool names.
const (
	ReadTool  = "read_file"
	WriteTool = "write_file"
	EditTool  = "edit_file"
	ListTool  = "list_directory"
	GlobTool  = "glob"
	GrepTool  = "grep"
)

// DefaultName is the toolset's name and id when no option sets them.
const DefaultName = "filesystem"

// DefaultApprovalReason is the reason the mutating tools wait for.
const DefaultApprovalReason = "changes files in the environment"

// Option configures [New].
type Option func(*config)

type config struct {
	provider   environment.FileSystem
	name, id   string
	noApproval bool
	reason     string
}

// WithProvider binds the toolset to p instead of the run's environment.
func WithProvider(p environment.FileSystem) Option { return func(c *config) { c.provider = p } }

// WithName names the toolset (default [DefaultName]); its id follows
// unless [WithID] sets one.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithID sets the toolset's stable id (default: its name).
func WithID(id string) Option { return func(c *config) { c.id = id } }

// WithoutApproval is the explicit opt-out of the approval gate: write and
// edit calls run without waiting for a person.
func WithoutApproval() Option { return func(c *config) { c.noApproval = true } }

// WithApprovalReason sets the reason the mutating tools wait for.
func WithApprovalReason(reason string) Option { return func(c *config) { c.reason = reason } }

// New returns the filesystem toolset. Bound to a provider it can be
// listed without a run (toolsets.KnownTools); otherwise its tools are
// built, once per provider, when a run prepares it.
func New(opts ...Option) (toolsets.Toolset, error) {
	c := config{name: DefaultName, reason: DefaultApprovalReason}
	for _, o := range opts {
		o(&c)
	}
	if c.id == "" {
		c.id = c.name
	}
	if err := toolsets.ValidateName(c.name); err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	if c.provider != nil {
		return build(c, c.provider)
	}
	return environment.FromRun(toolsets.ToolsetInfo{Name: c.name, ID: c.id}, func(fsys environment.FileSystem) (toolsets.Toolset, error) {
		return build(c, fsys)
	}), nil
}

// build returns the toolset of fsys: a function toolset of the tools its
// policy allows, behind the approval gate for the mutating ones.
func build(c config, fsys environment.FileSystem) (toolsets.Toolset, error) {
	ts, err := toolsets.NewFunction(c.name, toolsets.WithID(c.id), toolsets.WithInstructions(
		"Paths are relative to the environment's root. '..' above it, absolute paths outside it and symbolic links that leave it are refused.",
		"edit_file replaces exact text: copy old_string from read_file output, whitespace included, with enough lines to make it unique.",
	))
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	t := &tools{fs: fsys}
	policy := fsys.FilePolicy()
	read := []toolsets.Option{toolsets.WithConcurrentSafe(true), toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: []string{"environment", "filesystem.read"}})}
	write := []toolsets.Option{toolsets.WithSequential(true), toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: []string{"environment", "filesystem.write"}})}
	with := func(base []toolsets.Option, desc string) []toolsets.Option {
		return append([]toolsets.Option{toolsets.WithDescription(desc)}, base...)
	}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var mutating []string
	if !policy.DenyRead {
		add(toolsets.Add(ts, ReadTool, t.read, with(read, "Read a text file, whole or a range of lines (offset is the first line, from 1; limit the number of lines).")...))
		add(toolsets.Add(ts, GrepTool, t.grep, with(read, "Search file contents with a regular expression (RE2 syntax) under a directory or in one file; glob filters the files by path.")...))
	}
	add(toolsets.Add(ts, ListTool, t.list, with(read, "List a directory: names, types (file, dir, symlink, other) and sizes.")...))
	add(toolsets.Add(ts, GlobTool, t.glob, with(read, "Find paths matching a glob pattern relative to the root; * and ? stay within a path segment, ** matches any number of segments.")...))
	if !policy.DenyWrite {
		add(toolsets.Add(ts, WriteTool, t.write, with(write, "Write a file whole, creating it and its parent directories when missing.")...))
		mutating = append(mutating, WriteTool)
		if !policy.DenyRead {
			add(toolsets.Add(ts, EditTool, t.edit, with(write, "Replace exact text in a file: old_string must occur once, or set replace_all to replace every occurrence.")...))
			mutating = append(mutating, EditTool)
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("filesystem: %w", err)
		}
	}
	if c.noApproval || len(mutating) == 0 {
		return ts, nil
	}
	return toolsets.RequireApproval(ts, mutating, c.reason)
}

// tools are the tool functions over one provider.
type tools struct{ fs environment.FileSystem }
