package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// reportingTool wraps a tool and counts the attempts after which it asked
// ToolContext.WillRetry and was told yes, as the runtime's tool.retried
// evidence does.
type reportingTool struct {
	toolsets.Tool
	retries *atomic.Int32
}

func (r reportingTool) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	v, err := r.Tool.Call(ctx, tc, args)
	if tc.WillRetry(ctx, err) {
		r.retries.Add(1)
	}
	return v, err
}

// Only execution failures are retried; an attempt whose context ended, for
// its own timeout, the caller's deadline or a cancellation, ends the call
// with that kind at once, whatever error the tool returned (a context
// error, wrapped or not). A context error while the context is live is an
// ordinary execution failure.
func TestEndedContextKinds(t *testing.T) {
	const timeout = 50 * time.Millisecond
	tests := []struct {
		name string
		// caller, when set, derives the caller's context (and may end it).
		caller   func(context.Context) (context.Context, context.CancelFunc)
		timeout  bool // the tool has a per-attempt timeout
		tool     func(ctx context.Context, cancel context.CancelFunc) (string, error)
		kind     toolsets.Kind
		attempts int
		says     []string
	}{
		{name: "tool returns its ctx's error at the timeout", timeout: true,
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) { <-ctx.Done(); return "", ctx.Err() },
			kind: toolsets.KindTimeout, attempts: 1,
			says: []string{"timed out after 50ms", "toolsets.WithTimeout on the tool", "not retried"}},
		{name: "tool wraps the deadline in a url.Error", timeout: true,
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) {
				<-ctx.Done()
				return "", &url.Error{Op: "Get", URL: "http://example.test", Err: ctx.Err()}
			},
			kind: toolsets.KindTimeout, attempts: 1, says: []string{"timed out after 50ms"}},
		{name: "tool returns an ordinary error after the timeout", timeout: true,
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) {
				<-ctx.Done()
				return "", errors.New("socket closed")
			},
			kind: toolsets.KindTimeout, attempts: 1},
		{name: "tool returns a value after the timeout", timeout: true,
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) { <-ctx.Done(); return "partial", nil },
			kind: toolsets.KindSuccess, attempts: 1},
		{name: "caller cancels, tool returns context.Canceled wrapped",
			caller: context.WithCancel,
			tool: func(ctx context.Context, cancel context.CancelFunc) (string, error) {
				cancel()
				<-ctx.Done()
				return "", fmt.Errorf("query: %w", ctx.Err())
			},
			kind: toolsets.KindCancelled, attempts: 1, says: []string{"a new run is needed"}},
		{name: "caller's deadline passes",
			caller: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, time.Second)
			},
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) { <-ctx.Done(); return "", ctx.Err() },
			kind: toolsets.KindTimeout, attempts: 1, says: []string{"deadline of the caller's context"}},
		{name: "caller's deadline passes, tool claims a cancellation",
			caller: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, time.Second)
			},
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) {
				<-ctx.Done()
				return "", context.Canceled
			},
			kind: toolsets.KindTimeout, attempts: 1},
		{name: "DeadlineExceeded with a live ctx is an execution failure", timeout: true,
			tool: func(ctx context.Context, _ context.CancelFunc) (string, error) {
				inner, cancel := context.WithTimeout(ctx, time.Millisecond)
				defer cancel()
				<-inner.Done()
				return "", inner.Err()
			},
			kind: toolsets.KindExecution, attempts: 3, says: []string{"failed after 3 attempt(s)"}},
		{name: "Canceled with a live ctx is an execution failure",
			tool: func(context.Context, context.CancelFunc) (string, error) { return "", context.Canceled },
			kind: toolsets.KindExecution, attempts: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := t.Context(), context.CancelFunc(func() {})
				if tt.caller != nil {
					ctx, cancel = tt.caller(ctx)
				}
				defer cancel()
				var opts []toolsets.Option
				if tt.timeout {
					opts = append(opts, toolsets.WithTimeout(timeout))
				}
				var calls, retries atomic.Int32
				inner := mustTool(t)(toolsets.NewFunc("slow", func(ctx context.Context, _ noArgs) (string, error) {
					calls.Add(1)
					return tt.tool(ctx, cancel)
				}, opts...))
				ret := mustRegistry(t, nil, reportingTool{inner, &retries}).Call(ctx, toolsets.Invocation{Name: "slow"})
				if ret.Kind != tt.kind || ret.Attempts != tt.attempts || int(calls.Load()) != tt.attempts {
					t.Errorf("kind %s, %d attempts, %d calls; want %s after %d", ret.Kind, ret.Attempts, calls.Load(), tt.kind, tt.attempts)
				}
				if got := int(retries.Load()); got != tt.attempts-1 {
					t.Errorf("WillRetry said yes %d times, the registry retried %d times", got, tt.attempts-1)
				}
				for _, s := range tt.says {
					if ret.Control == nil || !strings.Contains(ret.Control.Message, s) {
						t.Errorf("message %+v does not say %q", ret.Control, s)
					}
				}
			})
		})
	}
}

// A tool's error is captured with its message and its Go type in the
// return's private metadata; the model's content has the message only.
func TestCapturedErrorType(t *testing.T) {
	_, pathErr := os.Open("/nonexistent/weft-test")
	tests := []struct {
		name     string
		fn       func() error
		wantType string
		wantMsg  string
	}{
		{"path error wrapped by fmt", func() error { return fmt.Errorf("load config: %w", pathErr) }, "*fs.PathError", "load config: " + pathErr.Error()},
		{"url error", func() error { return &url.Error{Op: "Get", URL: "http://x.test", Err: errors.New("refused")} }, "*url.Error", `Get "http://x.test": refused`},
		{"plain error", func() error { return errors.New("boom") }, "*errors.errorString", "boom"},
		{"panic with a string", func() error { panic("kaboom") }, "string", "panic: kaboom"},
		{"panic with an error", func() error { panic(pathErr) }, "*fs.PathError", "panic: " + pathErr.Error()},
		{"user error", func() error { return toolsets.NewUserError("no database", pathErr) }, "*toolsets.UserError", "user error: no database: " + pathErr.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := mustTool(t)(toolsets.NewFunc("t", func(context.Context, noArgs) (string, error) { return "", tt.fn() }, toolsets.WithMaxRetries(0)))
			ret := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{Name: "t"})
			typ, msg, ok := ret.CapturedError()
			if !ok || typ != tt.wantType || msg != tt.wantMsg {
				t.Errorf("CapturedError() = %q, %q, %v; want %q, %q", typ, msg, ok, tt.wantType, tt.wantMsg)
			}
			var content string
			if err := json.Unmarshal(ret.ModelContent(), &content); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(content, tt.wantType) {
				t.Errorf("the model content %q names the Go type", content)
			}
			if !strings.Contains(content, strings.TrimPrefix(tt.wantMsg, "panic: ")) {
				t.Errorf("the model content %q lacks the message", content)
			}
		})
	}
	t.Run("nothing captured without an error", func(t *testing.T) {
		for _, fn := range []func(context.Context, noArgs) (string, error){
			func(context.Context, noArgs) (string, error) { return "ok", nil },
			func(context.Context, noArgs) (string, error) { return "", toolsets.Feedback("no such file") },
		} {
			ret := mustRegistry(t, nil, mustTool(t)(toolsets.NewFunc("t", fn))).Call(t.Context(), toolsets.Invocation{Name: "t"})
			if _, _, ok := ret.CapturedError(); ok {
				t.Errorf("%s return captured an error: %v", ret.Kind, ret.PrivateMetadata)
			}
		}
	})
}

func TestErrorType(t *testing.T) {
	_, pathErr := os.Open("/nonexistent/weft-test")
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{pathErr, "*fs.PathError"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", pathErr)), "*fs.PathError"},
		{fmt.Errorf("no cause"), "*errors.errorString"},
		{errors.Join(pathErr, errors.New("x")), "*errors.joinError"},
		{context.DeadlineExceeded, "context.deadlineExceededError"},
	}
	for _, tt := range tests {
		if got := toolsets.ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// A Result marked Failed keeps every surface, is an execution return with
// is_error, and is not retried although the budget allows it.
func TestFailedResult(t *testing.T) {
	res := toolsets.Result{
		Content: map[string]any{"stderr": "main.go:3: undefined: x"}, Metadata: map[string]any{"exit": 2.0},
		AppValue: "app", ModelContent: "build failed: undefined x", UserContent: "**failed**",
		PrivateMetadata: map[string]any{"trace": "t1"}, Failed: true,
	}
	for _, tt := range []struct {
		name string
		val  any
	}{{"value", res}, {"pointer", &res}} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			tool := mustTool(t)(toolsets.NewFunc("build", func(context.Context, noArgs) (any, error) { calls.Add(1); return tt.val, nil }))
			got := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "build"})
			want := toolsets.Return{
				CallID: "c", ToolName: "build", Kind: toolsets.KindExecution, Success: false, IsError: true,
				Content: json.RawMessage(`{"stderr":"main.go:3: undefined: x"}`), ModelOverride: json.RawMessage(`"build failed: undefined x"`),
				Metadata: map[string]any{"exit": 2.0}, Attempts: 1, MaxAttempts: 3,
				AppValue: json.RawMessage(`"app"`), UserContent: json.RawMessage(`"**failed**"`),
				PrivateMetadata: map[string]any{"trace": "t1"}, Value: "app",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("return (-want +got):\n%s", diff)
			}
			if calls.Load() != 1 {
				t.Errorf("the tool ran %d times; a failed result is not retried", calls.Load())
			}
		})
	}
}

// The tool sees both counters: the registry's attempt and the run's model
// retries passed on the invocation.
func TestToolContextCounters(t *testing.T) {
	type seen struct{ Attempt, MaxAttempts, ModelRetries int }
	var got []seen
	tool := mustTool(t)(toolsets.NewContextFunc("t", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		got = append(got, seen{tc.Attempt, tc.MaxAttempts, tc.ModelRetries})
		if tc.Attempt == 1 {
			return "", errors.New("transient")
		}
		return "ok", nil
	}))
	ret := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{Name: "t", ModelRetries: 2})
	if ret.Kind != toolsets.KindSuccess {
		t.Fatalf("kind %s", ret.Kind)
	}
	want := []seen{{1, 3, 2}, {2, 3, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
}
