//go:build linux

package local_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
)

func shellRoot(t *testing.T, policy environment.ShellPolicy) (*local.Provider, string) {
	t.Helper()
	p, err := local.New(t.TempDir(), local.WithShellPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	must(t, os.Mkdir(filepath.Join(p.Root(), "sub"), 0o755))
	return p, p.Root()
}

func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		policy environment.ShellPolicy
		cmd    environment.Command
		code   int
		stdout string
		stderr string
		drop   int64 // stdout bytes dropped
		err    error
	}{
		{name: "argv", cmd: environment.Command{Argv: []string{"echo", "hi"}}, stdout: "hi\n"},
		{name: "script", cmd: environment.Command{Script: "echo out; echo err >&2; exit 3"}, code: 3, stdout: "out\n", stderr: "err\n"},
		{name: "working directory", cmd: environment.Command{Script: "basename \"$PWD\"", Dir: "sub"}, stdout: "sub\n"},
		{name: "home is the root", cmd: environment.Command{Script: "test \"$HOME\" = \"$PWD\" && echo same"}, stdout: "same\n"},
		{name: "output cap", policy: environment.ShellPolicy{MaxOutputBytes: 10}, cmd: environment.Command{Script: "yes a | head -c 100"}, stdout: "a\na\na\na\na\n", drop: 90},
		{name: "allowed program", policy: environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, cmd: environment.Command{Argv: []string{"echo", "ok"}}, stdout: "ok\n"},
		{name: "script refused while programs are listed", policy: environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, cmd: environment.Command{Script: "echo hi"}, err: environment.ErrProgramNotAllowed},
		{name: "program not listed", policy: environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, cmd: environment.Command{Argv: []string{"ls"}}, err: environment.ErrProgramNotAllowed},
		{name: "listed name, other path", policy: environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, cmd: environment.Command{Argv: []string{"/bin/echo"}}, err: environment.ErrProgramNotAllowed},
		{name: "denied", policy: environment.ShellPolicy{Deny: true}, cmd: environment.Command{Argv: []string{"echo"}}, err: environment.ErrDenied},
		{name: "directory outside", cmd: environment.Command{Argv: []string{"pwd"}, Dir: "../"}, err: environment.ErrOutsideRoot},
		{name: "missing program", cmd: environment.Command{Argv: []string{"no-such-program-weft"}}, err: fs.ErrNotExist},
		{name: "empty", cmd: environment.Command{}, err: environment.ErrInvalidCommand},
		{name: "both", cmd: environment.Command{Script: "true", Argv: []string{"true"}}, err: environment.ErrInvalidCommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := shellRoot(t, tt.policy)
			res, err := p.Run(t.Context(), tt.cmd)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Run = %+v, %v; want error %v", res, err, tt.err)
			}
			var ce *environment.CommandError
			if err != nil {
				if !errors.As(err, &ce) {
					t.Errorf("error %v is not a CommandError", err)
				}
				return
			}
			if res.ExitCode != tt.code || string(res.Stdout) != tt.stdout || string(res.Stderr) != tt.stderr || res.StdoutDropped != tt.drop || res.TimedOut {
				t.Errorf("Run = code %d stdout %q stderr %q dropped %d timed out %v; want %d %q %q %d", res.ExitCode, res.Stdout, res.Stderr, res.StdoutDropped, res.TimedOut, tt.code, tt.stdout, tt.stderr, tt.drop)
			}
		})
	}
}

// TestRunEnvironment: the host's environment, credentials included, does
// not reach a command unless the policy passes a variable through.
func TestRunEnvironment(t *testing.T) {
	const secret = "sk-weft-test-9f8e7d"
	t.Setenv("WEFT_TEST_API_KEY", secret)
	for _, inherit := range []bool{false, true} {
		t.Run(fmt.Sprintf("inherit=%v", inherit), func(t *testing.T) {
			var policy environment.ShellPolicy
			if inherit {
				policy.InheritEnv = []string{"WEFT_TEST_API_KEY"}
			}
			policy.Env = []string{"EXTRA=1"}
			p, _ := shellRoot(t, policy)
			res, err := p.Run(t.Context(), environment.Command{Argv: []string{"env"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(res.Stdout, []byte(secret)); got != inherit {
				t.Errorf("secret in the command's environment: %v, want %v:\n%s", got, inherit, res.Stdout)
			}
			if !bytes.Contains(res.Stdout, []byte("EXTRA=1\n")) {
				t.Errorf("policy Env missing:\n%s", res.Stdout)
			}
		})
	}
}

// pidIn waits for the pid a command wrote to name and returns it.
func pidIn(t *testing.T, name string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(name); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", name)
	return 0
}

// gone waits until pid has exited (no process, or a zombie nobody reaped:
// in a container without an init, orphans are not reaped).
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d still running", pid)
}

// grandchild is a script that leaves a grandchild process behind: a
// background sleep whose pid it writes to gc.pid, then itself sleeps in
// the foreground when wait is set.
func grandchild(wait bool) string {
	s := "sh -c 'sleep 1000' & echo $! > gc.pid.tmp && mv gc.pid.tmp gc.pid"
	if wait {
		s += "; sleep 1000"
	}
	return s
}

func TestRunKillsTheProcessGroup(t *testing.T) {
	tests := []struct {
		name    string
		wait    bool
		timeout time.Duration
		cancel  bool
	}{
		{name: "timeout", wait: true, timeout: 300 * time.Millisecond},
		{name: "cancellation", wait: true, cancel: true},
		{name: "normal exit leaves a child", wait: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, root := shellRoot(t, environment.ShellPolicy{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type out struct {
				res environment.CommandResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				res, err := p.Run(ctx, environment.Command{Script: grandchild(tt.wait), Timeout: tt.timeout})
				done <- out{res, err}
			}()
			pid := pidIn(t, filepath.Join(root, "gc.pid"))
			if tt.cancel {
				cancel()
			}
			got := <-done
			switch {
			case tt.cancel:
				if !errors.Is(got.err, context.Canceled) {
					t.Errorf("Run = %+v, %v; want context.Canceled", got.res, got.err)
				}
			case tt.timeout > 0:
				if got.err != nil || !got.res.TimedOut || got.res.ExitCode != -1 || got.res.Timeout != tt.timeout {
					t.Errorf("Run = %+v, %v; want a timed-out result", got.res, got.err)
				}
			default:
				if got.err != nil || got.res.TimedOut || got.res.ExitCode != 0 {
					t.Errorf("Run = %+v, %v; want exit 0", got.res, got.err)
				}
			}
			gone(t, pid)
		})
	}
}

// TestRunProcessLimit: with MaxProcesses 1 and one command running, the
// next is refused; once it ends, commands run again.
func TestRunProcessLimit(t *testing.T) {
	p, root := shellRoot(t, environment.ShellPolicy{MaxProcesses: 1})
	var wg sync.WaitGroup
	var first error
	wg.Go(func() {
		_, first = p.Run(t.Context(), environment.Command{Script: "touch started; while [ ! -e release ]; do sleep 0.01; done"})
	})
	for {
		if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := p.Run(t.Context(), environment.Command{Argv: []string{"true"}}); !errors.Is(err, environment.ErrProcessLimit) {
		t.Errorf("second command = %v, want ErrProcessLimit", err)
	}
	must(t, os.WriteFile(filepath.Join(root, "release"), nil, 0o644))
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
	if _, err := p.Run(t.Context(), environment.Command{Argv: []string{"true"}}); err != nil {
		t.Errorf("after the first ended: %v", err)
	}
}
