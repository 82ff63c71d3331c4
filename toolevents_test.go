package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A tool that fails once and then succeeds, and one that emits progress:
// the session stream records tool.started per attempt, tool.retried for the
// failed attempt and tool.progress with the emitted name and data, each
// before the call's tool.returned.
func TestToolRetriedAndProgressEvents(t *testing.T) {
	rt := newRuntime(t)
	var tries atomic.Int32
	flaky := tool(t, "flaky", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		if tries.Add(1) == 1 {
			return nil, errors.New("transient failure")
		}
		return "ok", nil
	}, toolsets.WithMaxRetries(1))
	chatty := tool(t, "chatty", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		if err := tc.Emit("step", map[string]int{"n": 1}); err != nil {
			return nil, err
		}
		return "done", nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("f", "flaky", `{}`), call("p", "chatty", `{}`)), llm.ScriptText("ok"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{flaky, chatty}}).NewSession()
	res, err := sess.Run(t.Context(), "go")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}

	// What each call's events say, in stream order.
	got := map[string][]string{}
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		var line string
		switch ev.Type {
		case events.TypeToolStarted:
			var d events.ToolStarted
			mustDecode(t, ev, &d)
			line = "started " + itoa(d.Attempt)
		case events.TypeToolRetried:
			var d events.ToolRetried
			mustDecode(t, ev, &d)
			line = "retried " + itoa(d.Attempt) + " " + d.Error.Kind + ": " + d.Error.Message
		case events.TypeToolProgress:
			var d events.ToolProgress
			mustDecode(t, ev, &d)
			line = "progress " + itoa(d.Attempt) + " " + d.Name + " " + string(d.Data)
		case events.TypeToolReturned:
			line = "returned " + itoa(returnOf(t, ev).Attempts) + " " + string(returnOf(t, ev).Kind)
		default:
			continue
		}
		got[ev.ToolCallID] = append(got[ev.ToolCallID], line)
	}
	want := map[string][]string{
		"f": {"started 1", "retried 1 execution: transient failure", "started 2", "returned 2 success"},
		"p": {"started 1", `progress 1 step {"n":1}`, "returned 1 success"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool events (-want +got):\n%s", d)
	}
}

func mustDecode(t *testing.T, ev events.Event, v any) {
	t.Helper()
	if err := json.Unmarshal(ev.Data, v); err != nil {
		t.Fatalf("decode %s: %v", ev.Type, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// What the session stream records for calls that end in an error: the
// tool.retried evidence follows the registry's retry rule (a timeout, or a
// context error after the attempt's context ended, is never retried), and
// tool.returned carries the error's kind, message and Go type, while the
// model gets the message only.
func TestToolErrorEvidence(t *testing.T) {
	_, pathErr := os.Open("/nonexistent/weft-config")
	tests := []struct {
		name      string
		fn        func(ctx context.Context) (any, error)
		opts      []toolsets.Option
		want      []string // the call's events
		wantError *events.ErrorInfo
	}{
		{name: "timeout is not retried",
			fn:        func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() },
			opts:      []toolsets.Option{toolsets.WithTimeout(20 * time.Millisecond)},
			want:      []string{"started 1", "returned 1 timeout"},
			wantError: &events.ErrorInfo{Kind: "timeout", Message: "context deadline exceeded", Type: "context.deadlineExceededError"}},
		{name: "execution failure keeps its Go type",
			fn:        func(context.Context) (any, error) { return nil, fmt.Errorf("load config: %w", pathErr) },
			opts:      []toolsets.Option{toolsets.WithMaxRetries(1)},
			want:      []string{"started 1", "retried 1 execution *fs.PathError: load config: " + pathErr.Error(), "started 2", "returned 2 execution"},
			wantError: &events.ErrorInfo{Kind: "execution", Message: "load config: " + pathErr.Error(), Type: "*fs.PathError"}},
		{name: "failed result is not retried",
			fn:   func(context.Context) (any, error) { return toolsets.Result{Content: "exit 2", Failed: true}, nil },
			want: []string{"started 1", "returned 1 execution"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			tl := tool(t, "t", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) { return tt.fn(ctx) }, tt.opts...)
			model := llm.NewScripted(llm.ScriptToolCalls(call("c", "t", `{}`)), llm.ScriptText("ok"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{tl}}).NewSession()
			if res, err := sess.Run(t.Context(), "go"); err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			var got []string
			var gotError *events.ErrorInfo
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				switch ev.Type {
				case events.TypeToolStarted:
					var d events.ToolStarted
					mustDecode(t, ev, &d)
					got = append(got, "started "+itoa(d.Attempt))
				case events.TypeToolRetried:
					var d events.ToolRetried
					mustDecode(t, ev, &d)
					got = append(got, "retried "+itoa(d.Attempt)+" "+d.Error.Kind+" "+d.Error.Type+": "+d.Error.Message)
				case events.TypeToolReturned:
					var d events.ToolReturned
					mustDecode(t, ev, &d)
					got = append(got, "returned "+itoa(d.Attempt)+" "+string(returnOf(t, ev).Kind))
					gotError = d.Error
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("tool events (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantError, gotError); d != "" {
				t.Errorf("tool.returned error (-want +got):\n%s", d)
			}
			for _, p := range lastUserMessage(t, model, 1).ToolReturns() {
				if tt.wantError != nil && strings.Contains(string(p.Content), tt.wantError.Type) {
					t.Errorf("the model's tool return %s names the Go type", p.Content)
				}
				if !p.IsError {
					t.Errorf("the model's tool return is not an error: %+v", p)
				}
			}
		})
	}
}
