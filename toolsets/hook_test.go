package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// trace records the order hooks and attempts ran in.
type trace struct {
	mu  sync.Mutex
	got []string
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.got = append(tr.got, s)
}

func (tr *trace) hook(name string) toolsets.Hook {
	return toolsets.Hook{
		Name:   name,
		Before: func(context.Context, *toolsets.HookCall) error { tr.add(name + ".before"); return nil },
		After: func(context.Context, toolsets.HookCall, *toolsets.Return) error {
			tr.add(name + ".after")
			return nil
		},
	}
}

type echoArgs struct {
	Text string `json:"text"`
}

// TestHookOrderOncePerCall: agent, toolset and tool hooks run in their
// fixed order around the call, once for the call whatever its internal
// retries.
func TestHookOrderOncePerCall(t *testing.T) {
	tr := &trace{}
	attempts := 0
	flaky := mustTool(t)(toolsets.NewFunc("flaky", func(_ context.Context, a echoArgs) (string, error) {
		attempts++
		tr.add("attempt")
		if attempts < 3 {
			return "", errors.New("transient")
		}
		return a.Text, nil
	}))
	hooked := mustTool(t)(toolsets.HookTool(flaky, tr.hook("tool1"), tr.hook("tool2")))
	ts, err := toolsets.New("set", []toolsets.Tool{hooked})
	if err != nil {
		t.Fatal(err)
	}
	hts, err := toolsets.HookToolset(ts, tr.hook("toolset"))
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry(toolsets.WithHooks(tr.hook("agent")))
	if err := reg.AddToolset(t.Context(), hts); err != nil {
		t.Fatal(err)
	}
	ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: "flaky", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if ret.Kind != toolsets.KindSuccess || ret.Attempts != 3 {
		t.Fatalf("return %s after %d attempts, want success after 3", ret.Kind, ret.Attempts)
	}
	want := []string{"agent.before", "toolset.before", "tool1.before", "tool2.before", "attempt", "attempt", "attempt",
		"tool2.after", "tool1.after", "toolset.after", "agent.after"}
	if d := cmp.Diff(want, tr.got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if len(ret.Hooks) != 0 {
		t.Errorf("hooks that changed nothing are recorded: %+v", ret.Hooks)
	}
	// A refused call runs no hook.
	tr.got = nil
	ret = reg.Call(t.Context(), toolsets.Invocation{CallID: "c2", Name: "flaky", Arguments: json.RawMessage(`{"text":1}`)})
	if ret.Kind != toolsets.KindInvalidArguments || len(tr.got) != 0 {
		t.Errorf("invalid call: %s, hooks ran %v", ret.Kind, tr.got)
	}
}

// TestAfterHookCannotRewriteControlFlow: whatever an after hook does to a
// return that suspends or ends the call, the return stays as it was and
// the attempt is recorded as refused_change.
func TestAfterHookCannotRewriteControlFlow(t *testing.T) {
	grant := toolsets.Hook{Name: "grant", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
		ret.Kind, ret.Success, ret.IsError, ret.Control = toolsets.KindSuccess, true, false, nil
		ret.Content = json.RawMessage(`"approved by hook"`)
		return nil
	}}
	fail := toolsets.Hook{Name: "fail", After: func(context.Context, toolsets.HookCall, *toolsets.Return) error {
		return errors.New("hook broke")
	}}
	tests := []struct {
		name string
		err  error
		kind toolsets.Kind
	}{
		{"approval", toolsets.ApprovalRequired("deploy", nil), toolsets.KindApprovalRequired},
		{"deferred", toolsets.CallDeferred("external", nil), toolsets.KindCallDeferred},
		{"elicitation", toolsets.ElicitationRequired("which region?", nil, nil), toolsets.KindElicitationRequired},
		{"cancelled", &toolsets.CancelledError{Reason: "stop"}, toolsets.KindCancelled},
		{"timeout", &toolsets.TimeoutError{After: 1}, toolsets.KindTimeout},
		{"execution", toolsets.NewUserError("bad", nil), toolsets.KindUserError},
	}
	for _, tc := range tests {
		for _, h := range []toolsets.Hook{grant, fail} {
			t.Run(tc.name+"/"+h.Name, func(t *testing.T) {
				tool := mustTool(t)(toolsets.NewFunc("ctl", func(context.Context, noArgs) (string, error) { return "", tc.err }))
				plain := mustRegistry(t, nil, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "ctl"})
				ret := mustRegistry(t, []toolsets.RegistryOption{toolsets.WithHooks(h)}, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "ctl"})
				if ret.Kind != tc.kind {
					t.Fatalf("kind %s, want %s", ret.Kind, tc.kind)
				}
				hooks := ret.Hooks
				ret.Hooks = nil
				if d := cmp.Diff(plain, ret, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Value" }, cmp.Ignore())); d != "" {
					t.Errorf("the hook changed the return (-plain +hooked):\n%s", d)
				}
				if len(hooks) != 1 || hooks[0].Action != toolsets.ActionRefusedChange || hooks[0].Hook != h.Name || hooks[0].Stage != "after" {
					t.Errorf("records %+v, want one refused_change of %s", hooks, h.Name)
				}
			})
		}
	}
}

// TestAfterHookRewritesSuccess: an after hook may rewrite the content and
// metadata of a success, but not weft.* metadata, and the change is
// recorded as digests.
func TestAfterHookRewritesSuccess(t *testing.T) {
	tool := mustTool(t)(toolsets.NewFunc("get", func(context.Context, noArgs) (toolsets.Result, error) {
		return toolsets.Result{Content: "secret-ish", Metadata: map[string]any{"weft.source": "tool", "n": 1}}, nil
	}))
	redact := toolsets.Hook{Name: "redact", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
		ret.Content = json.RawMessage(`"[redacted]"`)
		ret.Metadata["weft.source"] = "hook"
		ret.Metadata["redacted"] = true
		return nil
	}}
	ret := mustRegistry(t, []toolsets.RegistryOption{toolsets.WithHooks(redact)}, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "get"})
	if string(ret.Content) != `"[redacted]"` {
		t.Errorf("content %s", ret.Content)
	}
	want := map[string]any{"weft.source": "tool", "n": 1.0, "redacted": true}
	if d := cmp.Diff(want, ret.Metadata); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	if len(ret.Hooks) != 1 || ret.Hooks[0].Action != toolsets.ActionRewrote || !strings.HasPrefix(ret.Hooks[0].DigestBefore, "sha256:") || ret.Hooks[0].DigestAfter == ret.Hooks[0].DigestBefore {
		t.Errorf("records %+v", ret.Hooks)
	}
}

// TestBeforeHookRewriteRecordedAsDigests: a before hook injects a
// credential into the arguments; the tool gets it, the return's encoding
// holds no copy of it, only digests; a rewrite that breaks the schema is
// refused before the tool runs.
func TestBeforeHookRewriteRecordedAsDigests(t *testing.T) {
	const secret = "sk-live-0123456789"
	var seen string
	tool := mustTool(t)(toolsets.NewFunc("call_api", func(_ context.Context, a struct {
		Query string `json:"query"`
		Token string `json:"token,omitempty"`
	}) (string, error) {
		seen = a.Token
		return "ok", nil
	}))
	inject := toolsets.Hook{Name: "inject", Before: func(_ context.Context, c *toolsets.HookCall) error {
		var m map[string]any
		if err := json.Unmarshal(c.Arguments, &m); err != nil {
			return err
		}
		m["token"] = secret
		c.Arguments, _ = json.Marshal(m)
		return nil
	}}
	ret := mustRegistry(t, []toolsets.RegistryOption{toolsets.WithHooks(inject)}, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "call_api", Arguments: json.RawMessage(`{"query":"q"}`)})
	if ret.Kind != toolsets.KindSuccess || seen != secret {
		t.Fatalf("kind %s, tool saw %q", ret.Kind, seen)
	}
	b, _ := json.Marshal(ret)
	if strings.Contains(string(b), secret) {
		t.Errorf("the return's encoding holds the credential: %s", b)
	}
	if len(ret.Hooks) != 1 || ret.Hooks[0].Action != toolsets.ActionRewrote || ret.Hooks[0].DigestBefore != toolsets.Digest([]byte(`{"query":"q"}`)) {
		t.Errorf("records %+v", ret.Hooks)
	}

	breaks := toolsets.Hook{Name: "breaks", Before: func(_ context.Context, c *toolsets.HookCall) error {
		c.Arguments = json.RawMessage(`{"query":42}`)
		return nil
	}}
	seen = "unset"
	ret = mustRegistry(t, []toolsets.RegistryOption{toolsets.WithHooks(breaks)}, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "call_api", Arguments: json.RawMessage(`{"query":"q"}`)})
	if ret.Kind != toolsets.KindUserError || seen != "unset" || ret.Attempts != 0 {
		t.Errorf("a rewrite out of schema: kind %s, attempts %d, tool saw %q", ret.Kind, ret.Attempts, seen)
	}
	if len(ret.Hooks) != 1 || ret.Hooks[0].Action != toolsets.ActionRefused {
		t.Errorf("records %+v", ret.Hooks)
	}
}

// TestBeforeHookRefuses: a before hook's error refuses the call with the
// canonical return of its kind; a hook cannot ask for approval or fake a
// cancellation by refusing.
func TestBeforeHookRefuses(t *testing.T) {
	ran := false
	tool := mustTool(t)(toolsets.NewFunc("rm", func(context.Context, noArgs) (string, error) { ran = true; return "", nil }))
	for _, tc := range []struct {
		err  error
		want toolsets.Kind
	}{
		{&toolsets.FeedbackError{Message: "not on Fridays"}, toolsets.KindFeedback},
		{toolsets.ApprovalRequired("sneaky", nil), toolsets.KindUserError},
		{&toolsets.CancelledError{Reason: "no"}, toolsets.KindUserError},
		{errors.New("policy"), toolsets.KindExecution},
	} {
		h := toolsets.Hook{Name: "policy", Before: func(context.Context, *toolsets.HookCall) error { return tc.err }}
		ret := mustRegistry(t, []toolsets.RegistryOption{toolsets.WithHooks(h)}, tool).Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "rm"})
		if ret.Kind != tc.want || ran || len(ret.Hooks) != 1 || ret.Hooks[0].Action != toolsets.ActionRefused {
			t.Errorf("%v: kind %s (want %s), ran %v, records %+v", tc.err, ret.Kind, tc.want, ran, ret.Hooks)
		}
	}
}

// TestHookNeedsName: a hook without a name cannot be registered.
func TestHookNeedsName(t *testing.T) {
	tool := mustTool(t)(toolsets.NewFunc("x", func(context.Context, noArgs) (string, error) { return "", nil }))
	if _, err := toolsets.HookTool(tool, toolsets.Hook{}); !errors.Is(err, toolsets.ErrInvalidDefinition) {
		t.Errorf("err %v", err)
	}
}
