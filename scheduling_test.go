package weft_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// barrierTools returns n tools named t0..t(n-1) whose calls wait until
// meet calls are running at once (or until a generous fallback), recording
// concurrency.
func barrierTools(t *testing.T, c *counter, n, meet int, opts ...toolsets.Option) []toolsets.Tool {
	all := make(chan struct{})
	var tools []toolsets.Tool
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, tool(t, name, func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
			c.enter(name)
			defer c.leave()
			if int(c.entered.Load()) == meet {
				select {
				case <-all:
				default:
					close(all)
				}
			}
			select {
			case <-all:
			case <-time.After(500 * time.Millisecond): // sequential execution never meets the barrier
			}
			return name, nil
		}, opts...))
	}
	return tools
}

func TestScheduling(t *testing.T) {
	tests := []struct {
		name    string
		opts    []toolsets.Option
		calls   []llm.ToolCall
		n       int
		wantMax int
	}{
		{name: "parallel by default", n: 4, wantMax: 4,
			calls: []llm.ToolCall{call("c0", "t0", `{}`), call("c1", "t1", `{}`), call("c2", "t2", `{}`), call("c3", "t3", `{}`)}},
		{name: "sequential tool", n: 2, wantMax: 1, opts: []toolsets.Option{toolsets.WithSequential(true)},
			calls: []llm.ToolCall{call("c0", "t1", `{}`), call("c1", "t0", `{}`)}},
		{name: "repeated name", n: 2, wantMax: 1,
			calls: []llm.ToolCall{call("c0", "t1", `{}`), call("c1", "t0", `{}`), call("c2", "t1", `{}`)}},
		{name: "repeated concurrent-safe tool", n: 2, wantMax: 4, opts: []toolsets.Option{toolsets.WithConcurrentSafe(true)},
			calls: []llm.ToolCall{call("c0", "t0", `{}`), call("c1", "t1", `{}`), call("c2", "t0", `{}`), call("c3", "t0", `{}`)}},
		{name: "sequential wins over concurrent-safe", n: 2, wantMax: 1, opts: []toolsets.Option{toolsets.WithConcurrentSafe(true), toolsets.WithSequential(true)},
			calls: []llm.ToolCall{call("c0", "t0", `{}`), call("c1", "t0", `{}`), call("c2", "t1", `{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			c := &counter{}
			model := llm.NewScripted(llm.ScriptToolCalls(tt.calls...), llm.ScriptText("ok"))
			a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: barrierTools(t, c, tt.n, len(tt.calls), tt.opts...)})
			res, err := a.Run(t.Context(), "go")
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if c.max != tt.wantMax {
				t.Errorf("max concurrency = %d, want %d", c.max, tt.wantMax)
			}
			if tt.wantMax == 1 {
				var want []string
				for _, cl := range tt.calls {
					want = append(want, cl.Name)
				}
				if d := cmp.Diff(want, c.order); d != "" {
					t.Errorf("execution order (-want +got):\n%s", d)
				}
			}
			// Returns reach the model in the model's order.
			var got []string
			for _, p := range lastUserMessage(t, model, 1).ToolReturns() {
				got = append(got, p.CallID)
			}
			var want []string
			for _, cl := range tt.calls {
				want = append(want, cl.ID)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("return order (-want +got):\n%s", d)
			}
		})
	}
}

// The first call finishes last; its return still comes first.
func TestReturnsInModelOrder(t *testing.T) {
	rt := newRuntime(t)
	secondDone := make(chan struct{})
	slow := tool(t, "slow", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		<-secondDone
		return "slow", nil
	})
	fast := tool(t, "fast", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		defer close(secondDone)
		return "fast", nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("a", "slow", `{}`), call("b", "fast", `{}`)), llm.ScriptText("ok"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{slow, fast}})
	if _, err := a.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range lastUserMessage(t, model, 1).ToolReturns() {
		got = append(got, p.CallID+"="+string(p.Content))
	}
	if d := cmp.Diff([]string{`a="slow"`, `b="fast"`}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestToolCallLimitCheckedForBatch(t *testing.T) {
	rt := newRuntime(t)
	c := &counter{}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c0", "t0", `{}`), call("c1", "t1", `{}`), call("c2", "t2", `{}`)), llm.ScriptText("ok"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: barrierTools(t, c, 3, 3), Limits: weft.UsageLimits{ToolCalls: weft.AtMost(2)}})
	res, err := a.Run(t.Context(), "go")
	var re *weft.RunError
	if !errors.As(err, &re) || re.Kind != "usage_limit_exceeded" || res.Status != weft.StatusFailed {
		t.Fatalf("Run = %+v, %v; want usage_limit_exceeded", res, err)
	}
	if n := c.entered.Load(); n != 0 {
		t.Errorf("%d calls ran; want none", n)
	}
}
