//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/weft-run/weft/toolsets/environment"
)

// drainGrace bounds how long the output of a command is read after its
// process group was killed: a process that left the group (setsid) may
// still hold the pipes.
const drainGrace = 2 * time.Second

// defaultPath is a command's PATH when the host has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Run runs cmd in the root as its own process group, under the shell
// policy; see environment.Shell and the package documentation.
func (l *Provider) Run(ctx context.Context, cmd environment.Command) (environment.CommandResult, error) {
	if err := l.shell.Check(cmd); err != nil {
		return environment.CommandResult{}, err
	}
	fail := func(err error) (environment.CommandResult, error) {
		return environment.CommandResult{}, &environment.CommandError{Command: cmd.String(), Err: err}
	}
	if err := ctx.Err(); err != nil {
		return environment.CommandResult{}, err
	}
	cwd, err := l.workdir(cmd.Dir)
	if err != nil {
		return fail(err)
	}
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	default:
		return fail(fmt.Errorf("%w: %d commands are running, the policy's MaxProcesses", environment.ErrProcessLimit, cap(l.slots)))
	}
	argv := cmd.Argv
	if cmd.Script != "" {
		argv = append(l.shell.ShellArgv(), cmd.Script)
	}
	res, err := l.run(ctx, argv, cwd, l.shell.TimeoutFor(cmd.Timeout))
	if err != nil && ctx.Err() == nil {
		return fail(err)
	}
	return res, err
}

// workdir returns the host path of dir, a directory inside the root.
func (l *Provider) workdir(dir string) (string, error) {
	c, err := environment.Clean(l.path, dir)
	if err != nil {
		return "", &environment.PathError{Op: "dir", Path: dir, Err: err}
	}
	fi, err := l.root.Stat(c)
	if err != nil {
		return "", l.fail("dir", dir, err)
	}
	if !fi.IsDir() {
		return "", &environment.PathError{Op: "dir", Path: dir, Err: fmt.Errorf("%w: not a directory", environment.ErrNotRegular)}
	}
	return filepath.Join(l.path, filepath.FromSlash(c)), nil
}

// env is a command's environment: PATH, HOME, the inherited variables
// the policy names, then its Env.
func (l *Provider) env() []string {
	p := os.Getenv("PATH")
	if p == "" {
		p = defaultPath
	}
	out := []string{"PATH=" + p, "HOME=" + l.path}
	for _, name := range l.shell.InheritEnv {
		if v, ok := os.LookupEnv(name); ok {
			out = append(out, name+"="+v)
		}
	}
	return append(out, l.shell.Env...)
}

// run starts argv as a process group and collects its result. It returns
// ctx's error when ctx ended before the command did (the group is killed
// then too).
func (l *Provider) run(ctx context.Context, argv []string, cwd string, timeout time.Duration) (environment.CommandResult, error) {
	c := exec.Command(argv[0], argv[1:]...)
	if c.Err != nil {
		return environment.CommandResult{}, fmt.Errorf("%w: %v", fs.ErrNotExist, c.Err)
	}
	c.Dir, c.Env = cwd, l.env()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The command writes to pipes of our own (files, not writers), so
	// Wait does not wait for their readers, and the group can be killed
	// before the output is drained.
	outR, outW, err := os.Pipe()
	if err != nil {
		return environment.CommandResult{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return environment.CommandResult{}, err
	}
	c.Stdout, c.Stderr = outW, errW
	start := time.Now()
	err = c.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return environment.CommandResult{}, err
	}
	limit := l.shell.OutputLimit()
	stdout, stderr := environment.NewCapture(limit), environment.NewCapture(limit)
	var readers sync.WaitGroup
	readers.Go(func() { _, _ = io.Copy(stdout, outR) })
	readers.Go(func() { _, _ = io.Copy(stderr, errR) })

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	exited, reap := watchLeader(c)
	killed := false
	select {
	case <-exited:
	case <-runCtx.Done():
		killed = true
	}
	// Kill the whole group: on timeout or cancellation, and after a
	// normal exit, for what the command left running.
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	<-exited
	werr := reap()
	res := environment.CommandResult{Timeout: timeout, Duration: time.Since(start), ExitCode: c.ProcessState.ExitCode()}
	deadline := time.Now().Add(drainGrace)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	readers.Wait()
	outR.Close()
	errR.Close()
	res.Stdout, res.StdoutDropped = stdout.Result()
	res.Stderr, res.StderrDropped = stderr.Result()
	if killed {
		res.ExitCode = -1
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.TimedOut = true
		return res, nil
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return res, werr
	}
	return res, nil
}
