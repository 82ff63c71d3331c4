package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestReturns reads a run's tool returns back from its events, in log
// order: a success, a feedback failure, a suspension and the denial that
// closed it.
func TestReturns(t *testing.T) {
	rt := newRuntime(t)
	echo := tool(t, "echo", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "hi", nil })
	sad := tool(t, "sad", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		return nil, toolsets.Feedback("no such file")
	})
	guarded := tool(t, "guarded", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "ran", nil })
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("c1", "echo", `{}`)),
		llm.ScriptToolCalls(call("c2", "sad", `{}`)),
		llm.ScriptToolCalls(call("c3", "guarded", `{}`)),
		llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{echo, sad, guarded}, ApprovalRequiredTools: []string{"guarded"}})
	s := a.NewSession()
	runWaiting(t, s, "go")
	res, err := s.Resume(t.Context(), weft.Deny("c3", "alice", "not today"))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v; want completed", res, err)
	}
	evs, err := s.Events(t.Context(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	rets, err := weft.Returns(evs)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Call, Tool string
		Kind       toolsets.Kind
		IsError    bool
		Content    string
	}
	var got []row
	var last uint64
	for _, r := range rets {
		if r.RunID != res.RunID || r.Version <= last {
			t.Errorf("return %s: run %s version %d, want run %s after version %d", r.CallID, r.RunID, r.Version, res.RunID, last)
		}
		last = r.Version
		got = append(got, row{r.CallID, r.ToolName, r.Kind, r.IsError, string(r.ModelContent())})
	}
	want := []row{
		{"c1", "echo", toolsets.KindSuccess, false, `"hi"`},
		{"c2", "sad", toolsets.KindFeedback, false, `"no such file"`},
		{"c3", "guarded", toolsets.KindApprovalRequired, false, ""},
		{"c3", "guarded", toolsets.KindFeedback, false, `"The call was denied by alice: not today."`},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b row) bool {
		// A suspension's content is the runtime's wording: compare its kind only.
		if a.Kind == toolsets.KindApprovalRequired && b.Kind == a.Kind {
			return a.Call == b.Call && a.Tool == b.Tool
		}
		return a == b
	})); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
	if rets[2].Control == nil || rets[3].Control == nil || rets[3].Control.Reason != "not today" {
		t.Errorf("control payloads %+v, %+v; want the suspension's and the denial's", rets[2].Control, rets[3].Control)
	}
}

func TestReturnsMalformed(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"data", `[1]`},
		{"return", `{"tool":"x","return":"not an object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := events.Event{Type: events.TypeToolReturned, Version: 1, Data: json.RawMessage(`{"tool":"x","return":{"call_id":"c1","tool_name":"x","kind":"success","success":true,"content":"1"}}`)}
			bad := events.Event{Type: events.TypeToolReturned, Version: 2, Data: json.RawMessage(tt.data)}
			rets, err := weft.Returns([]events.Event{ok, {Type: events.TypeRunStarted, Version: 2}, bad})
			if !errors.Is(err, events.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if len(rets) != 1 || rets[0].CallID != "c1" {
				t.Errorf("returns before the malformed event = %+v, want c1's", rets)
			}
		})
	}
}
