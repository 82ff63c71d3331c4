package shell_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
	"github.com/weft-run/weft/toolsets/environment/virtual"
	"github.com/weft-run/weft/toolsets/shell"
)

func registry(t *testing.T, ts toolsets.Toolset, tc *toolsets.ToolsetContext) *toolsets.Registry {
	t.Helper()
	p, err := toolsets.Resolve(t.Context(), ts, tc)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(p.Tools...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(ctx context.Context, reg *toolsets.Registry, args string, approved bool, emit toolsets.Emitter) toolsets.Return {
	inv := toolsets.Invocation{CallID: "c1", Name: shell.RunTool, Arguments: json.RawMessage(args), RunID: "r1", SessionID: "s1", Emitter: emit}
	if approved {
		inv.Approval = &toolsets.Approval{DecidedBy: "test"}
	}
	return reg.Call(ctx, inv)
}

func effectOf(t *testing.T, v any) environment.Effect {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var e environment.Effect
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func scripted(t *testing.T, policy environment.ShellPolicy) *virtual.Provider {
	t.Helper()
	v, err := virtual.New(nil, virtual.WithShellPolicy(policy),
		virtual.WithCommand("go test ./...", virtual.Output{ExitCode: 1, Stdout: "--- FAIL: TestX", Stderr: "exit status 1"}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDefinition(t *testing.T) {
	for _, optOut := range []bool{false, true} {
		opts := []shell.Option{shell.WithProvider(scripted(t, environment.ShellPolicy{Timeout: time.Minute, MaxTimeout: 5 * time.Minute}))}
		if optOut {
			opts = append(opts, shell.WithoutApproval())
		}
		ts, err := shell.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		known, ok, err := toolsets.KnownTools(ts)
		if !ok || err != nil || len(known) != 1 {
			t.Fatalf("KnownTools = %d tools, %v, %v", len(known), ok, err)
		}
		d := known[0].Definition()
		if toolsets.GatingOf(d).Approval == optOut || !d.Sequential || d.MaxRetries == nil || *d.MaxRetries != 0 || d.Timeout != 5*time.Minute+30*time.Second {
			t.Errorf("opt out %v: approval %v, sequential %v, max retries %v, timeout %s", optOut, toolsets.GatingOf(d).Approval, d.Sequential, d.MaxRetries, d.Timeout)
		}
	}
}

func TestVirtual(t *testing.T) {
	tests := []struct {
		name    string
		policy  environment.ShellPolicy
		args    string
		kind    toolsets.Kind
		refused string
		want    *shell.RunResult
	}{
		{name: "scripted", args: `{"argv":["go","test","./..."]}`, kind: toolsets.KindSuccess,
			want: &shell.RunResult{ExitCode: 1, Stdout: "--- FAIL: TestX", Stderr: "exit status 1", TimeoutSeconds: 120}},
		{name: "output cap", policy: environment.ShellPolicy{MaxOutputBytes: 3}, args: `{"command":"go test ./..."}`, kind: toolsets.KindSuccess,
			want: &shell.RunResult{ExitCode: 1, Stdout: "---", Stderr: "exi", StdoutTruncatedBytes: 12, StderrTruncatedBytes: 10, TimeoutSeconds: 120}},
		{name: "not scripted", args: `{"command":"rm -rf /"}`, kind: toolsets.KindFeedback, refused: "not_supported"},
		{name: "script while programs are listed", policy: environment.ShellPolicy{AllowedPrograms: []string{"go"}}, args: `{"command":"go test ./..."}`, kind: toolsets.KindFeedback, refused: "program_not_allowed"},
		{name: "program not listed", policy: environment.ShellPolicy{AllowedPrograms: []string{"git"}}, args: `{"argv":["go","test","./..."]}`, kind: toolsets.KindFeedback, refused: "program_not_allowed"},
		{name: "denied", policy: environment.ShellPolicy{Deny: true}, args: `{"argv":["go"]}`, kind: toolsets.KindFeedback, refused: "denied"},
		{name: "both", args: `{"command":"x","argv":["x"]}`, kind: toolsets.KindInvalidArguments},
		{name: "neither", args: `{}`, kind: toolsets.KindInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := shell.New(shell.WithProvider(scripted(t, tt.policy)))
			if err != nil {
				t.Fatal(err)
			}
			reg := registry(t, ts, nil)
			if ret := call(t.Context(), reg, tt.args, false, nil); ret.Kind != toolsets.KindApprovalRequired {
				t.Fatalf("unapproved = %s, want approval_required", ret.Kind)
			}
			ret := call(t.Context(), reg, tt.args, true, nil)
			if ret.Kind != tt.kind || ret.Metadata[environment.MetaRefused] != nil && ret.Metadata[environment.MetaRefused] != tt.refused {
				t.Fatalf("run = %s %s %v; want %s %q", ret.Kind, ret.Content, ret.Metadata, tt.kind, tt.refused)
			}
			if tt.want == nil {
				if _, ok := ret.Metadata[environment.MetaEffect]; ok {
					t.Error("a refused command recorded an effect")
				}
				return
			}
			var got shell.RunResult
			if err := json.Unmarshal(ret.Content, &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(*tt.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			e := effectOf(t, ret.Metadata[environment.MetaEffect])
			code := tt.want.ExitCode
			var in struct {
				Command string   `json:"command"`
				Argv    []string `json:"argv"`
			}
			_ = json.Unmarshal([]byte(tt.args), &in)
			want := environment.Effect{Kind: environment.EffectCommand, SessionID: "s1", RunID: "r1", CallID: "c1", Tool: shell.RunTool, Script: in.Command, Argv: in.Argv, ExitCode: &code}
			if d := cmp.Diff(want, e); d != "" {
				t.Errorf("effect (-want +got):\n%s", d)
			}
		})
	}
}

func TestFromRun(t *testing.T) {
	ts, err := shell.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{Environment: "not an environment"}); !errors.Is(err, environment.ErrNoEnvironment) {
		t.Errorf("Resolve = %v, want ErrNoEnvironment", err)
	}
	reg := registry(t, ts, &toolsets.ToolsetContext{Environment: scripted(t, environment.ShellPolicy{})})
	if ret := call(t.Context(), reg, `{"command":"go test ./..."}`, true, nil); ret.Kind != toolsets.KindSuccess {
		t.Errorf("run = %s %s", ret.Kind, ret.Content)
	}
}

func localShell(t *testing.T, policy environment.ShellPolicy) (*toolsets.Registry, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the local shell's process-group tests run on Linux")
	}
	p, err := local.New(t.TempDir(), local.WithShellPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ts, err := shell.New(shell.WithProvider(p), shell.WithoutApproval())
	if err != nil {
		t.Fatal(err)
	}
	return registry(t, ts, nil), p.Root()
}

func TestLocal(t *testing.T) {
	tests := []struct {
		name   string
		policy environment.ShellPolicy
		args   string
		kind   toolsets.Kind
		want   shell.RunResult
	}{
		{name: "exit code", args: `{"command":"echo out; echo err >&2; exit 4"}`, kind: toolsets.KindSuccess, want: shell.RunResult{ExitCode: 4, Stdout: "out\n", Stderr: "err\n", TimeoutSeconds: 120}},
		{name: "output cap", policy: environment.ShellPolicy{MaxOutputBytes: 4}, args: `{"command":"yes | head -c 1000"}`, kind: toolsets.KindSuccess, want: shell.RunResult{Stdout: "y\ny\n", StdoutTruncatedBytes: 996, TimeoutSeconds: 120}},
		{name: "timeout", policy: environment.ShellPolicy{Timeout: 200 * time.Millisecond}, args: `{"command":"echo started; sleep 1000"}`, kind: toolsets.KindExecution, want: shell.RunResult{ExitCode: -1, Stdout: "started\n", TimedOut: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, _ := localShell(t, tt.policy)
			ret := call(t.Context(), reg, tt.args, false, nil)
			var got shell.RunResult
			if err := json.Unmarshal(ret.Content, &got); ret.Kind != tt.kind || err != nil {
				t.Fatalf("run = %s %s", ret.Kind, ret.Content)
			}
			if ret.Attempts != 1 {
				t.Errorf("%d attempts", ret.Attempts)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(shell.RunResult{}, "DurationMS")); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			e := effectOf(t, ret.Metadata[environment.MetaEffect])
			if e.ExitCode == nil || *e.ExitCode != tt.want.ExitCode || e.TimedOut != tt.want.TimedOut || e.CallID != "c1" {
				t.Errorf("effect = %+v", e)
			}
		})
	}
}

// TestLocalCancel: a command cancelled mid-run returns a cancellation,
// and its effect reaches the log as a progress event.
func TestLocalCancel(t *testing.T) {
	reg, root := localShell(t, environment.ShellPolicy{})
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var progress []toolsets.Progress
	emit := toolsets.EmitterFunc(func(p toolsets.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() })
	done := make(chan toolsets.Return, 1)
	go func() { done <- call(ctx, reg, `{"command":"touch started; sleep 1000"}`, false, emit) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	cancel()
	ret := <-done
	if ret.Kind != toolsets.KindCancelled {
		t.Fatalf("run = %s %s, want cancelled", ret.Kind, ret.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 1 || progress[0].Name != environment.MetaEffect {
		t.Fatalf("progress = %+v", progress)
	}
	e := effectOf(t, progress[0].Data)
	if e.Script != "touch started; sleep 1000" || e.ExitCode == nil || *e.ExitCode != -1 || e.CallID != "c1" {
		t.Errorf("effect = %+v", e)
	}
}
