package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func mustRegistry(t *testing.T, opts []toolsets.RegistryOption, tools ...toolsets.Tool) *toolsets.Registry {
	t.Helper()
	reg := toolsets.NewRegistry(opts...)
	if err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustTool(t *testing.T) func(toolsets.Tool, error) toolsets.Tool {
	return func(tool toolsets.Tool, err error) toolsets.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
}

type noArgs struct{}

// TestErrorMapping runs one tool per control-flow outcome through the
// registry and checks the whole canonical return.
func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want toolsets.Return
	}{
		{"model retry", toolsets.ModelRetry("use ISO dates"), toolsets.Return{
			Kind: toolsets.KindModelRetry, IsError: true, Attempts: 1, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: "use ISO dates", HowToFix: "Follow the message and call the tool again."},
			PrivateMetadata: map[string]any{"error": "model retry: use ISO dates", "error_type": "*toolsets.ModelRetryError"},
		}},
		{"invalid arguments from tool", toolsets.InvalidArguments("date", "date is in the past", "Pick a future date."), toolsets.Return{
			Kind: toolsets.KindInvalidArguments, IsError: true, Attempts: 1, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: "date is in the past", Field: "date", HowToFix: "Pick a future date."},
			PrivateMetadata: map[string]any{"error": "invalid arguments: date is in the past Pick a future date.", "error_type": "*toolsets.InvalidArgumentsError"},
		}},
		{"feedback", &toolsets.FeedbackError{Message: "file not found", Metadata: map[string]any{"status": 404.0}}, toolsets.Return{
			Kind: toolsets.KindFeedback, Attempts: 1, MaxAttempts: 3, Metadata: map[string]any{"status": 404.0},
			Control: &toolsets.Control{Message: "file not found"},
		}},
		{"user error", toolsets.NewUserError("database not wired", nil), toolsets.Return{
			Kind: toolsets.KindUserError, IsError: true, Attempts: 1, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: "user error: database not wired"},
			PrivateMetadata: map[string]any{"error": "user error: database not wired", "error_type": "*toolsets.UserError"},
		}},
		{"approval", toolsets.ApprovalRequired("deploy production", map[string]any{"risk": "high"}), toolsets.Return{
			Kind: toolsets.KindApprovalRequired, Attempts: 1, MaxAttempts: 3,
			Control: &toolsets.Control{Message: "approval required: deploy production", Reason: "deploy production", Metadata: map[string]any{"risk": "high"}},
		}},
		{"deferred", toolsets.CallDeferred("external worker", map[string]any{"queue": "builds"}), toolsets.Return{
			Kind: toolsets.KindCallDeferred, Attempts: 1, MaxAttempts: 3,
			Control: &toolsets.Control{Message: "call deferred: external worker", Reason: "external worker", Metadata: map[string]any{"queue": "builds"}},
		}},
		{"cancelled by tool", &toolsets.CancelledError{Reason: "operator"}, toolsets.Return{
			Kind: toolsets.KindCancelled, IsError: true, Attempts: 1, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: `tool "t": cancelled: operator. The call did not finish and is not retried: a new run is needed to run it again.`},
			PrivateMetadata: map[string]any{"error": "cancelled: operator", "error_type": "*toolsets.CancelledError"},
		}},
		{"execution", errors.New("disk on fire"), toolsets.Return{
			Kind: toolsets.KindExecution, IsError: true, Attempts: 3, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: `tool "t" failed after 3 attempt(s): disk on fire`},
			PrivateMetadata: map[string]any{"error": "disk on fire", "error_type": "*errors.errorString"},
		}},
		{"foreign type named UserError", UserError{"not weft's"}, toolsets.Return{
			Kind: toolsets.KindExecution, IsError: true, Attempts: 3, MaxAttempts: 3,
			Control:         &toolsets.Control{Message: `tool "t" failed after 3 attempt(s): not weft's`},
			PrivateMetadata: map[string]any{"error": "not weft's", "error_type": "toolsets_test.UserError"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			tool := mustTool(t)(toolsets.NewFunc("t", func(context.Context, noArgs) (string, error) {
				calls.Add(1)
				return "", tt.err
			}))
			reg := mustRegistry(t, nil, tool)
			got := reg.Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "t"})
			want := tt.want
			want.CallID, want.ToolName = "c", "t"
			want.Success = false
			text := want.Control.Message
			if want.Control.HowToFix != "" {
				text += " " + want.Control.HowToFix
			}
			want.Content, _ = json.Marshal(text)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("return (-want +got):\n%s", diff)
			}
			if int(calls.Load()) != want.Attempts {
				t.Errorf("tool ran %d times, want %d", calls.Load(), want.Attempts)
			}
			if got.IsError != got.Kind.Flags().IsError {
				t.Errorf("is_error disagrees with the kind table")
			}
		})
	}
}

func TestPanicRecovered(t *testing.T) {
	tool := mustTool(t)(toolsets.NewFunc("explode", func(context.Context, noArgs) (string, error) {
		panic("kaboom")
	}))
	reg := mustRegistry(t, []toolsets.RegistryOption{toolsets.WithDefaultMaxRetries(0)}, tool)
	ret := reg.Call(t.Context(), toolsets.Invocation{Name: "explode"})
	if ret.Kind != toolsets.KindExecution || ret.Attempts != 1 {
		t.Fatalf("kind = %s attempts = %d", ret.Kind, ret.Attempts)
	}
	stack, _ := ret.PrivateMetadata["stack"].(string)
	if !strings.Contains(stack, "goroutine") || ret.PrivateMetadata["panic"] != "kaboom" {
		t.Errorf("private metadata lacks the panic and stack: %v", ret.PrivateMetadata)
	}
	if !strings.Contains(string(ret.Content), "kaboom") {
		t.Errorf("content %s does not report the panic", ret.Content)
	}
	public, _ := json.Marshal(struct {
		C json.RawMessage
		M map[string]any
		X *toolsets.Control
	}{ret.ModelContent(), ret.Metadata, ret.Control})
	if strings.Contains(string(public), "goroutine") || strings.Contains(string(public), ".go:") {
		t.Errorf("stack leaked into model-facing surfaces: %s", public)
	}
}

func TestRetryBudgetPrecedence(t *testing.T) {
	failing := func(t *testing.T, calls *atomic.Int32, opts ...toolsets.Option) func(context.Context, *toolsets.ToolContext, noArgs) (string, error) {
		return func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			n := calls.Add(1)
			if tc.Attempt != int(n) {
				t.Errorf("Attempt = %d on attempt %d", tc.Attempt, n)
			}
			if tc.LastAttempt() != (tc.Attempt == tc.MaxAttempts) {
				t.Errorf("LastAttempt = %v at attempt %d of %d", tc.LastAttempt(), tc.Attempt, tc.MaxAttempts)
			}
			return "", errors.New("flaky")
		}
	}
	tests := []struct {
		name         string
		registry     []toolsets.RegistryOption
		toolset      []toolsets.Option // nil: register the tool directly
		tool         []toolsets.Option
		wantAttempts int
	}{
		{"seed default", nil, nil, nil, 3},
		{"registry default", []toolsets.RegistryOption{toolsets.WithDefaultMaxRetries(4)}, nil, nil, 5},
		{"toolset over registry", []toolsets.RegistryOption{toolsets.WithDefaultMaxRetries(4)}, []toolsets.Option{toolsets.WithMaxRetries(1)}, nil, 2},
		{"tool over toolset", []toolsets.RegistryOption{toolsets.WithDefaultMaxRetries(4)}, []toolsets.Option{toolsets.WithMaxRetries(1)}, []toolsets.Option{toolsets.WithMaxRetries(0)}, 1},
		{"toolset without budget uses registry", []toolsets.RegistryOption{toolsets.WithDefaultMaxRetries(1)}, []toolsets.Option{}, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			reg := toolsets.NewRegistry(tt.registry...)
			if tt.toolset == nil {
				tool := mustTool(t)(toolsets.NewContextFunc("flaky", failing(t, &calls), tt.tool...))
				if err := reg.Register(tool); err != nil {
					t.Fatal(err)
				}
			} else {
				fs, err := toolsets.NewFunction("fs", tt.toolset...)
				if err != nil {
					t.Fatal(err)
				}
				if err := toolsets.Add(fs, "flaky", failing(t, &calls), tt.tool...); err != nil {
					t.Fatal(err)
				}
				if err := reg.AddToolset(t.Context(), fs); err != nil {
					t.Fatal(err)
				}
			}
			ret := reg.Call(t.Context(), toolsets.Invocation{Name: "flaky"})
			if ret.Kind != toolsets.KindExecution || ret.Attempts != tt.wantAttempts || ret.MaxAttempts != tt.wantAttempts {
				t.Errorf("kind %s attempts %d/%d, want execution %d/%d", ret.Kind, ret.Attempts, ret.MaxAttempts, tt.wantAttempts, tt.wantAttempts)
			}
			if int(calls.Load()) != tt.wantAttempts {
				t.Errorf("tool ran %d times, want %d", calls.Load(), tt.wantAttempts)
			}
		})
	}
}

func TestRetryRecovers(t *testing.T) {
	var calls atomic.Int32
	tool := mustTool(t)(toolsets.NewFunc("flaky", func(context.Context, noArgs) (string, error) {
		if calls.Add(1) < 3 {
			return "", errors.New("transient")
		}
		return "ok", nil
	}))
	ret := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{Name: "flaky"})
	if ret.Kind != toolsets.KindSuccess || ret.Attempts != 3 || string(ret.Content) != `"ok"` {
		t.Errorf("got %s after %d attempts: %s", ret.Kind, ret.Attempts, ret.Content)
	}
}

func TestNoInternalRetryForControlFlow(t *testing.T) {
	for _, err := range []error{toolsets.NewUserError("x", nil), toolsets.ModelRetry("x"), toolsets.Feedback("x"), toolsets.ApprovalRequired("x", nil)} {
		var calls atomic.Int32
		tool := mustTool(t)(toolsets.NewFunc("t", func(context.Context, noArgs) (int, error) { calls.Add(1); return 0, err }))
		ret := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{Name: "t"})
		if calls.Load() != 1 || ret.Attempts != 1 {
			t.Errorf("%s: ran %d times", ret.Kind, calls.Load())
		}
	}
}

// blockUntilDone is a cooperative tool that waits for its ctx to end.
func blockUntilDone(calls *atomic.Int32) func(context.Context, *toolsets.ToolContext, noArgs) (string, error) {
	return func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		calls.Add(1)
		<-tc.Done()
		if !tc.IsCancelled() {
			return "", errors.New("Done closed but IsCancelled is false")
		}
		return "", ctx.Err()
	}
}

func TestTimeoutPrecedence(t *testing.T) {
	tests := []struct {
		name     string
		registry time.Duration
		toolset  time.Duration
		tool     time.Duration
		want     time.Duration
		hint     string // how the message says to raise it
	}{
		{"registry default", 40 * time.Second, 0, 0, 40 * time.Second, "toolsets.WithDefaultTimeout"},
		{"toolset over registry", 40 * time.Second, 20 * time.Second, 0, 20 * time.Second, "toolsets.WithTimeout on the toolset"},
		{"tool over toolset", 40 * time.Second, 20 * time.Second, 5 * time.Second, 5 * time.Second, "toolsets.WithTimeout on the tool"},
		{"tool longer than registry", 5 * time.Second, 0, 30 * time.Second, 30 * time.Second, "toolsets.WithTimeout on the tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				reg := toolsets.NewRegistry(toolsets.WithDefaultTimeout(tt.registry), toolsets.WithDefaultMaxRetries(1))
				var tsOpts, toolOpts []toolsets.Option
				if tt.toolset > 0 {
					tsOpts = append(tsOpts, toolsets.WithTimeout(tt.toolset))
				}
				if tt.tool > 0 {
					toolOpts = append(toolOpts, toolsets.WithTimeout(tt.tool))
				}
				fs, err := toolsets.NewFunction("fs", tsOpts...)
				if err != nil {
					t.Fatal(err)
				}
				if err := toolsets.Add(fs, "slow", blockUntilDone(&calls), toolOpts...); err != nil {
					t.Fatal(err)
				}
				if err := reg.AddToolset(t.Context(), fs); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				ret := reg.Call(t.Context(), toolsets.Invocation{Name: "slow"})
				// Fake time in the bubble: exactly one attempt's timeout,
				// as a timeout is not retried.
				if elapsed := time.Since(start); elapsed != tt.want {
					t.Errorf("elapsed %s, want %s", elapsed, tt.want)
				}
				if ret.Kind != toolsets.KindTimeout || ret.Attempts != 1 || calls.Load() != 1 {
					t.Errorf("kind %s attempts %d calls %d, want one timed-out attempt", ret.Kind, ret.Attempts, calls.Load())
				}
				for _, part := range []string{tt.want.String(), tt.hint} {
					if !strings.Contains(ret.Control.Message, part) {
						t.Errorf("message %q does not say %q", ret.Control.Message, part)
					}
				}
			})
		})
	}
}

func TestNoTimeoutByDefault(t *testing.T) {
	var sawDeadline bool
	tool := mustTool(t)(toolsets.NewFunc("t", func(ctx context.Context, _ noArgs) (bool, error) {
		_, sawDeadline = ctx.Deadline()
		return true, nil
	}))
	mustRegistry(t, nil, tool).Call(context.Background(), toolsets.Invocation{Name: "t"})
	if sawDeadline {
		t.Error("the tool got a deadline although none was configured")
	}
}

func TestCancellationObservedByRunningTool(t *testing.T) {
	started := make(chan struct{})
	var calls atomic.Int32
	tool := mustTool(t)(toolsets.NewContextFunc("wait", func(ctx context.Context, tc *toolsets.ToolContext, a noArgs) (string, error) {
		close(started)
		return blockUntilDone(&calls)(ctx, tc, a)
	}))
	reg := mustRegistry(t, nil, tool)
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan toolsets.Return)
	go func() { done <- reg.Call(ctx, toolsets.Invocation{Name: "wait"}) }()
	<-started
	cancel(errors.New("user pressed stop"))
	ret := <-done
	if ret.Kind != toolsets.KindCancelled || ret.Attempts != 1 || calls.Load() != 1 {
		t.Errorf("kind %s attempts %d calls %d, want one cancelled attempt", ret.Kind, ret.Attempts, calls.Load())
	}
	for _, part := range []string{"user pressed stop", "a new run is needed"} {
		if !strings.Contains(ret.Control.Message, part) {
			t.Errorf("message %q does not say %q", ret.Control.Message, part)
		}
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	var calls atomic.Int32
	tool := mustTool(t)(toolsets.NewFunc("t", func(context.Context, noArgs) (int, error) { calls.Add(1); return 1, nil }))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ret := mustRegistry(t, nil, tool).Call(ctx, toolsets.Invocation{Name: "t"})
	if ret.Kind != toolsets.KindCancelled || calls.Load() != 0 {
		t.Errorf("kind %s, tool ran %d times", ret.Kind, calls.Load())
	}
}

func TestHiddenAndNotFound(t *testing.T) {
	visible := mustTool(t)(toolsets.NewFunc("lookup", echo[noArgs], toolsets.WithDescription("Look things up.")))
	system := mustTool(t)(toolsets.NewFunc("describe_object", echo[noArgs], toolsets.WithVisibility(toolsets.System)))
	hidden := mustTool(t)(toolsets.NewFunc("load_adapter", func(context.Context, noArgs) (string, error) { return "adapter", nil }, toolsets.WithVisibility(toolsets.Hidden), toolsets.WithDescription("Internal.")))
	reg := mustRegistry(t, nil, visible, system, hidden)

	tests := []struct {
		name   string
		inv    toolsets.Invocation
		kind   toolsets.Kind
		substr string
	}{
		{"model calls hidden", toolsets.Invocation{Name: "load_adapter"}, toolsets.KindNotExposed, "not available to the model"},
		{"application calls hidden", toolsets.Invocation{Name: "load_adapter", Caller: toolsets.CallerApplication}, toolsets.KindSuccess, "adapter"},
		{"model calls system", toolsets.Invocation{Name: "describe_object"}, toolsets.KindSuccess, "{}"},
		{"unknown", toolsets.Invocation{Name: "nope"}, toolsets.KindNotFound, `"lookup", "describe_object".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := reg.Call(t.Context(), tt.inv)
			var text any
			if err := json.Unmarshal(ret.ModelContent(), &text); err != nil {
				t.Fatal(err)
			}
			if s, ok := text.(string); ok {
				text = s
			} else {
				text = string(ret.ModelContent())
			}
			if ret.Kind != tt.kind || !strings.Contains(text.(string), tt.substr) {
				t.Errorf("got %s %s, want %s containing %q", ret.Kind, ret.ModelContent(), tt.kind, tt.substr)
			}
			if strings.Contains(string(ret.ModelContent()), "load_adapter") && tt.kind == toolsets.KindNotFound {
				t.Errorf("not-found hint reveals the hidden tool")
			}
		})
	}
	var names []string
	for _, d := range reg.ModelDefinitions() {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"lookup", "describe_object"}, names); diff != "" {
		t.Errorf("model definitions (-want +got):\n%s", diff)
	}
	if len(reg.Definitions()) != 3 {
		t.Errorf("Definitions() = %d tools, want 3", len(reg.Definitions()))
	}
	for _, style := range []toolsets.DescribeStyle{toolsets.Brief, toolsets.Normal} {
		if d := reg.Describe(style); strings.Contains(d, "load_adapter") || !strings.Contains(d, "lookup") {
			t.Errorf("Describe(%d) = %q", style, d)
		}
	}
}

func TestToolContextFields(t *testing.T) {
	var got *toolsets.ToolContext
	var events []toolsets.Progress
	tool := mustTool(t)(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, a map[string]any) (any, error) {
		got = tc
		if err := tc.Emit("progress", map[string]int{"pct": 50}); err != nil {
			return nil, err
		}
		if err := tc.Emit("bad", func() {}); err == nil {
			return nil, errors.New("emitting a func did not fail")
		}
		return a, nil
	}, toolsets.WithSchema(`{"type":"object","properties":{"env":{"type":"string"}}}`)))
	reg := mustRegistry(t, nil, tool)
	approval := &toolsets.Approval{DecidedBy: "ui", Arguments: json.RawMessage(`{"env":"staging"}`)}
	deferred := &toolsets.DeferredResult{Value: json.RawMessage(`"done"`)}
	ret := reg.Call(t.Context(), toolsets.Invocation{
		CallID: "call_1", Name: "deploy", Arguments: json.RawMessage(`{"env":"production"}`),
		RunID: "run", SessionID: "sess", ConversationID: "conv",
		Metadata: map[string]any{"tenant": "acme"}, Approval: approval, Deferred: deferred,
		Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) { events = append(events, p) }),
	})
	if ret.Kind != toolsets.KindSuccess || string(ret.Content) != `{"env":"staging"}` {
		t.Fatalf("got %s %s: reviewed arguments were not used", ret.Kind, ret.Content)
	}
	if got.RunID != "run" || got.SessionID != "sess" || got.ConversationID != "conv" || got.CallID != "call_1" || got.ToolName != "deploy" {
		t.Errorf("ids: %+v", got)
	}
	if got.Approval != approval || got.Deferred != deferred || got.MaxAttempts != 3 || got.Attempt != 1 || got.LastAttempt() {
		t.Errorf("approval/deferred/retry: %+v", got)
	}
	if v, ok := got.Metadata("tenant"); !ok || v != "acme" {
		t.Errorf("metadata tenant = %v, %v", v, ok)
	}
	want := []toolsets.Progress{{CallID: "call_1", ToolName: "deploy", Attempt: 1, Name: "progress", Data: json.RawMessage(`{"pct":50}`)}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestStructuredResult(t *testing.T) {
	tool := mustTool(t)(toolsets.NewFunc("inspect_release", func(context.Context, map[string]any) (toolsets.Result, error) {
		return toolsets.Result{
			Content:         map[string]any{"raw": "application record"},
			Metadata:        map[string]any{"audit": "release"},
			AppValue:        map[string]any{"release_id": 42},
			ModelContent:    map[string]any{"summary": "release is ready"},
			UserContent:     map[string]any{"markdown": "**Ready**"},
			PrivateMetadata: map[string]any{"trace_id": "host-only"},
		}, nil
	}, toolsets.WithSchema(`{"type":"object","properties":{}}`)))
	ret := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{Name: "inspect_release"})
	if got := string(ret.ModelContent()); got != `{"summary":"release is ready"}` {
		t.Errorf("model content = %s", got)
	}
	for _, s := range []string{"host-only", "release_id", "Ready", "application record"} {
		if strings.Contains(string(ret.ModelContent()), s) {
			t.Errorf("model content leaks %q", s)
		}
	}
	if string(ret.AppValue) != `{"release_id":42}` || string(ret.UserContent) != `{"markdown":"**Ready**"}` || ret.PrivateMetadata["trace_id"] != "host-only" {
		t.Errorf("surfaces lost: %+v", ret)
	}

	unencodable := mustTool(t)(toolsets.NewFunc("bad", func(context.Context, noArgs) (chan int, error) { return make(chan int), nil }))
	if ret := mustRegistry(t, nil, unencodable).Call(t.Context(), toolsets.Invocation{Name: "bad"}); ret.Kind != toolsets.KindUserError {
		t.Errorf("unencodable result: kind %s", ret.Kind)
	}
}

func TestReturnJSONRoundTrip(t *testing.T) {
	in := toolsets.Return{
		CallID: "c", ToolName: "deploy", Kind: toolsets.KindApprovalRequired,
		Content: json.RawMessage(`"approval required"`), ModelOverride: json.RawMessage(`{"m":1}`),
		Metadata: map[string]any{"a": "b"}, Attempts: 1, MaxAttempts: 3,
		Control:  &toolsets.Control{Message: "m", Field: "f", HowToFix: "h", Reason: "r", Metadata: map[string]any{"risk": "high"}},
		AppValue: json.RawMessage(`{"id":1}`), UserContent: json.RawMessage(`"u"`),
		PrivateMetadata: map[string]any{"stack": "s"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out toolsets.Return
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"kind":"bogus"}`), &out); err == nil {
		t.Error("decoded a return with an unknown kind")
	}
}

func TestConcurrentCalls(t *testing.T) {
	tool := mustTool(t)(toolsets.NewFunc("add", func(_ context.Context, a addArgs) (addResult, error) {
		return addResult{Total: a.Left + a.Right}, nil
	}))
	reg := mustRegistry(t, nil, tool)
	const n = 16
	results := make(chan toolsets.Return, n)
	for i := range n {
		go func() {
			args, _ := json.Marshal(addArgs{Left: i, Right: 1})
			results <- reg.Call(t.Context(), toolsets.Invocation{Name: "add", Arguments: args})
		}()
	}
	for range n {
		if ret := <-results; ret.Kind != toolsets.KindSuccess {
			t.Errorf("kind %s: %s", ret.Kind, ret.Content)
		}
	}
}

// AddToolset registers the tools of the toolsets a preparation hands
// back, as a run's preparation does (Resolve).
func TestAddToolsetResolvesNestedToolsets(t *testing.T) {
	fn := func(name string) toolsets.Tool {
		tl, err := toolsets.NewFunc(name, func(context.Context, struct{}) (string, error) { return name, nil })
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	inner, err := toolsets.New("inner", []toolsets.Tool{fn("nested_tool")})
	if err != nil {
		t.Fatal(err)
	}
	outer, err := toolsets.NewDynamic("outer", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
		return []toolsets.Tool{fn("own_tool")}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := toolsets.NewRegistry()
	if err := r.AddToolset(t.Context(), handsBack{Toolset: outer, nested: inner}); err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); !slices.Contains(got, "nested_tool") || !slices.Contains(got, "own_tool") {
		t.Errorf("registered %v, want own_tool and nested_tool", got)
	}
}

// handsBack is a toolset whose preparation hands back another toolset.
type handsBack struct {
	toolsets.Toolset
	nested toolsets.Toolset
}

func (h handsBack) Prepare(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p, err := h.Toolset.Prepare(ctx, tc)
	p.Toolsets = append(p.Toolsets, h.nested)
	return p, err
}
