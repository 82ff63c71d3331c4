package weft_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestUsageLimits: the zero value limits nothing, AtMost(0) allows none
// and fails the run before anything it bounds happens.
func TestUsageLimits(t *testing.T) {
	oneCall := func() *llm.Scripted {
		return llm.NewScripted(llm.ScriptToolCalls(call("c1", "probe", `{}`)), llm.ScriptText("done"))
	}
	tests := []struct {
		name     string
		limits   weft.UsageLimits
		model    *llm.Scripted
		wantKind string // "" for a completed run
		ran      int32  // calls of probe
		requests int    // model requests made
	}{
		{"no limits", weft.UsageLimits{}, oneCall(), "", 1, 2},
		{"zero tool calls", weft.UsageLimits{ToolCalls: weft.AtMost(0)}, oneCall(), "usage_limit_exceeded", 0, 1},
		{"zero tool calls and no call", weft.UsageLimits{ToolCalls: weft.AtMost(0)}, llm.NewScripted(llm.ScriptText("done")), "", 0, 1},
		{"one tool call", weft.UsageLimits{ToolCalls: weft.AtMost(1)}, oneCall(), "", 1, 2},
		{"a negative limit is zero", weft.UsageLimits{ToolCalls: weft.AtMost(-3)}, oneCall(), "usage_limit_exceeded", 0, 1},
		{"zero requests", weft.UsageLimits{Requests: weft.AtMost(0)}, oneCall(), "usage_limit_exceeded", 0, 0},
		{"one request", weft.UsageLimits{Requests: weft.AtMost(1)}, oneCall(), "usage_limit_exceeded", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var ran atomic.Int32
			probe := tool(t, "probe", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
				ran.Add(1)
				return "ok", nil
			})
			a := newAgent(t, rt, weft.AgentConfig{Model: tt.model, Tools: []toolsets.Tool{probe}, Limits: tt.limits})
			res, err := a.Run(t.Context(), "go")
			var re *weft.RunError
			switch {
			case tt.wantKind == "" && (err != nil || res.Status != weft.StatusCompleted):
				t.Fatalf("Run = %+v, %v; want completed", res, err)
			case tt.wantKind != "" && (!errors.As(err, &re) || re.Kind != tt.wantKind || res.Status != weft.StatusFailed):
				t.Fatalf("Run = %+v, %v; want failed with %s", res, err, tt.wantKind)
			}
			if n := ran.Load(); n != tt.ran {
				t.Errorf("probe ran %d times, want %d", n, tt.ran)
			}
			if n := len(tt.model.Requests()); n != tt.requests {
				t.Errorf("%d model requests, want %d", n, tt.requests)
			}
			requested := slices.ContainsFunc(streamEvents(t, rt, res.SessionID), func(ev events.Event) bool { return ev.Type == events.TypeToolRequested })
			if requested != (tt.ran > 0) {
				t.Errorf("tool.requested recorded: %v, want %v", requested, tt.ran > 0)
			}
		})
	}
}

func TestLimitMax(t *testing.T) {
	tests := []struct {
		name    string
		l       weft.Limit
		n       int64
		limited bool
	}{
		{"zero value", weft.Limit{}, 0, false},
		{"at most 0", weft.AtMost(0), 0, true},
		{"at most 5", weft.AtMost(5), 5, true},
		{"negative", weft.AtMost(-1), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, limited := tt.l.Max(); n != tt.n || limited != tt.limited {
				t.Errorf("Max() = %d, %v; want %d, %v", n, limited, tt.n, tt.limited)
			}
		})
	}
}
