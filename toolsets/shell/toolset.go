// Package shell is the shell toolset of an environment (the seed's
// shell_toolset()): one tool, run_command, that runs a command in the
// environment's root through its [environment.Shell].
//
//	env, _ := local.New(dir, local.WithShellPolicy(environment.ShellPolicy{AllowedPrograms: []string{"go", "git"}}))
//	sh, _ := shell.New(shell.WithProvider(env))
//
// Like the filesystem toolset, it uses the provider bound to it
// ([WithProvider]) or the environment attached to the run.
//
// The provider's [environment.ShellPolicy] decides what runs: the
// programs allowed (scripts are refused when they are listed), the
// timeout, the output kept, how many commands run at once. A refusal
// reaches the model as feedback with its code under
// [environment.MetaRefused]. A command that ran returns its exit code,
// stdout and stderr (each cut at the policy's cap, with the count of
// bytes cut); a non-zero exit is a success (the model reads the code); a
// command killed at its timeout is a failed result (kind execution,
// never retried) that keeps its partial output. On the virtual provider
// only scripted commands run; the others are refused as not supported.
//
// run_command is sequential, is never retried by the registry (a
// command must not run twice because an attempt failed), and waits for a
// human approval before it runs unless the toolset is built
// [WithoutApproval]. Every command that ran records an
// [environment.Effect] (the command, its directory, exit code, timeout,
// duration, and the session, run and call) in its return's metadata; a
// command cancelled mid-run, whose return is built from the
// cancellation, reports its effect as a progress event named
// [environment.MetaEffect] first.
package shell

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
)

// RunTool is the tool's name.
const RunTool = "run_command"

// DefaultName is the toolset's name and id when no option sets them.
const DefaultName = "shell"

// DefaultApprovalReason is the reason run_command waits for.
const DefaultApprovalReason = "runs a command in the environment"

// timeoutGrace is added to the policy's longest command timeout to make
// the tool's own timeout, a backstop behind the policy's.
const timeoutGrace = 30 * time.Second

// Option configures [New].
type Option func(*config)

type config struct {
	provider   environment.Shell
	name, id   string
	noApproval bool
	reason     string
}

// WithProvider binds the toolset to p instead of the run's environment.
func WithProvider(p environment.Shell) Option { return func(c *config) { c.provider = p } }

// WithName names the toolset (default [DefaultName]); its id follows
// unless [WithID] sets one.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithID sets the toolset's stable id (default: its name).
func WithID(id string) Option { return func(c *config) { c.id = id } }

// WithoutApproval is the explicit opt-out of the approval gate: commands
// run without waiting for a person.
func WithoutApproval() Option { return func(c *config) { c.noApproval = true } }

// WithApprovalReason sets the reason run_command waits for.
func WithApprovalReason(reason string) Option { return func(c *config) { c.reason = reason } }

// New returns the shell toolset. Bound to a provider it can be listed
// without a run (toolsets.KnownTools).
func New(opts ...Option) (toolsets.Toolset, error) {
	c := config{name: DefaultName, reason: DefaultApprovalReason}
	for _, o := range opts {
		o(&c)
	}
	if c.id == "" {
		c.id = c.name
	}
	if err := toolsets.ValidateName(c.name); err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	if c.provider != nil {
		return build(c, c.provider)
	}
	return environment.FromRun(toolsets.ToolsetInfo{Name: c.name, ID: c.id}, func(sh environment.Shell) (toolsets.Toolset, error) {
		return build(c, sh)
	}), nil
}

func build(c config, sh environment.Shell) (toolsets.Toolset, error) {
	policy := sh.ShellPolicy()
	desc := "Run a command in the environment's root: either command (a shell script) or argv (a program and its arguments). Returns the exit code, stdout and stderr."
	if len(policy.AllowedPrograms) > 0 {
		desc = "Run a program in the environment's root, given as argv. Only these programs are allowed: " + strings.Join(policy.AllowedPrograms, ", ") + "; shell scripts (command) are refused. Returns the exit code, stdout and stderr."
	}
	ts, err := toolsets.NewFunction(c.name, toolsets.WithID(c.id))
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	r := &runner{sh: sh}
	if err := toolsets.Add(ts, RunTool, r.run, toolsets.WithDescription(desc), toolsets.WithSequential(true), toolsets.WithMaxRetries(0),
		toolsets.WithTimeout(policy.TimeoutFor(1<<62)+timeoutGrace),
		toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: []string{"environment", "shell"}})); err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	if c.noApproval {
		return ts, nil
	}
	return toolsets.RequireApproval(ts, []string{RunTool}, c.reason)
}

// RunArgs are run_command's arguments.
type RunArgs struct {
	Command        string   `json:"command,omitempty" jsonschema:"a shell script, run by /bin/sh -c"`
	Argv           []string `json:"argv,omitempty" jsonschema:"a program and its arguments, run without a shell"`
	Dir            string   `json:"dir,omitempty" jsonschema:"the working directory, relative to the root (default: the root)"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"the command's timeout in seconds (default and ceiling: the environment's policy)"`
}

// RunResult is run_command's content.
type RunResult struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutTruncatedBytes and StderrTruncatedBytes count the bytes cut
	// past the policy's output cap.
	StdoutTruncatedBytes int64 `json:"stdout_truncated_bytes,omitempty"`
	StderrTruncatedBytes int64 `json:"stderr_truncated_bytes,omitempty"`
	// TimedOut reports a command killed at its timeout (TimeoutSeconds).
	TimedOut       bool  `json:"timed_out,omitempty"`
	TimeoutSeconds int64 `json:"timeout_seconds,omitempty"`
	DurationMS     int64 `json:"duration_ms"`
}

type runner struct{ sh environment.Shell }

func (r *runner) run(ctx context.Context, tc *toolsets.ToolContext, a RunArgs) (toolsets.Result, error) {
	if (a.Command == "") == (len(a.Argv) == 0) {
		return toolsets.Result{}, toolsets.InvalidArguments("command", "give either command or argv", "Set command to a shell script, or argv to a program and its arguments, not both.")
	}
	if a.TimeoutSeconds < 0 {
		return toolsets.Result{}, toolsets.InvalidArguments("timeout_seconds", "timeout_seconds is negative", "Give a positive number of seconds, or leave it out.")
	}
	cmd := environment.Command{Script: a.Command, Argv: a.Argv, Dir: a.Dir, Timeout: time.Duration(a.TimeoutSeconds) * time.Second}
	res, err := r.sh.Run(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil && res.Duration > 0 {
			// It ran and was cancelled: the return is the cancellation's,
			// so the effect goes to the log as progress.
			_ = tc.Emit(environment.MetaEffect, environment.CommandEffect(tc, cmd, res))
		}
		return toolsets.Result{}, environment.ToolError(err)
	}
	return toolsets.Result{
		Content: RunResult{ExitCode: res.ExitCode, Stdout: string(res.Stdout), Stderr: string(res.Stderr),
			StdoutTruncatedBytes: res.StdoutDropped, StderrTruncatedBytes: res.StderrDropped,
			TimedOut: res.TimedOut, TimeoutSeconds: int64(res.Timeout / time.Second), DurationMS: res.Duration.Milliseconds()},
		Metadata: map[string]any{environment.MetaEffect: environment.CommandEffect(tc, cmd, res)},
		Failed:   res.TimedOut,
	}, nil
}
