package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

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
