package weft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func codeCall(id, program string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"code": program})
	return llm.ToolCall{ID: id, Name: codemode.ToolName, Arguments: args}
}

// codeAgent is an agent with the calendar tools, run_code over cal and
// extra tools.
func codeAgent(t *testing.T, rt *weft.Runtime, model llm.Model, cal *Calendar, limits weft.UsageLimits, extra ...toolsets.Tool) *weft.Agent {
	t.Helper()
	tools := append(calendarTools(cal), extra...)
	env := &codemode.Env{Objects: map[string]any{"calendar": cal}, Values: map[string]any{"today": "2026-03-02"}, Tools: tools}
	return newAgent(t, rt, weft.AgentConfig{Model: model, Tools: append(tools, codemode.NewTool(env)),
		ApprovalRequiredTools: []string{"move_meeting"}, Limits: limits})
}

func TestCodeModeApprovalMidProgram(t *testing.T) {
	rt := newRuntime(t)
	cal := newCalendar()
	model := llm.NewScripted(llm.ScriptToolCalls(codeCall("c1", calendarProgram)), llm.ScriptText("done"))
	sess := codeAgent(t, rt, model, cal, weft.UsageLimits{}).NewSession()
	res, err := sess.Run(t.Context(), "move it", weft.CodeMode())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 || res.Pending.Approvals[0].ID != "c1.2" {
		t.Fatalf("first run = %+v; want waiting for the approval of c1.2", res)
	}
	if got := model.Requests()[0].Tools; len(got) != 1 || got[0].Name != codemode.ToolName {
		t.Fatalf("code mode offered %v; want run_code only", got)
	}
	if cal.moves != 0 {
		t.Fatalf("move_meeting ran before its approval")
	}
	res, err = sess.Resume(t.Context(), weft.Approve("c1.2", "ana", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if cal.moves != 1 {
		t.Fatalf("move_meeting ran %d times, want once", cal.moves)
	}
	var parents []string
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeToolRequested {
			var d events.ToolRequested
			_ = json.Unmarshal(ev.Data, &d)
			parents = append(parents, ev.ToolCallID+"<"+d.Parent)
		}
	}
	if want := "c1<,c1.1<c1,c1.2<c1"; strings.Join(parents, ",") != want {
		t.Fatalf("tool.requested = %v, want %s", parents, want)
	}
	if res.Usage.ToolCalls != 3 {
		t.Fatalf("usage counts %d tool calls, want 3 (the code call and its two)", res.Usage.ToolCalls)
	}
	// Only the program's return reaches the model.
	rets := lastUserMessage(t, model, 1).ToolReturns()
	if len(rets) != 1 || rets[0].CallID != "c1" || !strings.Contains(string(rets[0].Content), "moved to 2026-03-02T12:00:00Z") {
		t.Fatalf("returns to the model = %+v", rets)
	}
}

func TestCodeModeDeferredMidProgram(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	lookup := tool(t, "lookup_owner", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		runs.Add(1)
		return nil, toolsets.CallDeferred("asks the directory", nil)
	})
	model := llm.NewScripted(llm.ScriptToolCalls(codeCall("c1", "owner = lookup_owner()\nprint('owner:', owner['name'])")), llm.ScriptText("done"))
	sess := codeAgent(t, rt, model, newCalendar(), weft.UsageLimits{}, lookup).NewSession()
	res, err := sess.Run(t.Context(), "who owns it?", weft.CodeMode())
	if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Deferred) != 1 || res.Pending.Deferred[0].ID != "c1.1" {
		t.Fatalf("Run = %+v, %v; want waiting for c1.1", res, err)
	}
	res, err = sess.Resume(t.Context(), weft.Complete("c1.1", "directory", map[string]any{"name": "ana"}))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	rets := lastUserMessage(t, model, 1).ToolReturns()
	if len(rets) != 1 || string(rets[0].Content) != `"owner: ana"` {
		t.Fatalf("program return = %+v", rets)
	}
	if runs.Load() != 1 {
		t.Fatalf("lookup_owner ran %d times, want once", runs.Load())
	}
}

func TestCodeModeToolCallLimit(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { runs.Add(1); return "pong", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(codeCall("c1", "for i in range(5):\n  ping()")), llm.ScriptText("done"))
	// The code call is one; two of its calls fit the limit of 3.
	sess := codeAgent(t, rt, model, newCalendar(), weft.UsageLimits{ToolCalls: weft.AtMost(3)}, ping).NewSession()
	res, err := sess.Run(t.Context(), "ping", weft.CodeMode())
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 2 {
		t.Fatalf("ping ran %d times; the limit allows 2", runs.Load())
	}
	rets := lastUserMessage(t, model, 1).ToolReturns()
	if len(rets) != 1 || !strings.Contains(string(rets[0].Content), "limit of 3 tool calls") || !rets[0].IsError {
		t.Fatalf("program return = %+v, %v", rets, res)
	}
}

func TestCodeModeDivergence(t *testing.T) {
	rt := newRuntime(t)
	// The program branches on a live read; the calendar changes between
	// its first run and its replay, so the replay calls another tool
	// where the journal recorded find_empty_slot.
	cal := newCalendar()
	var ping atomic.Int32
	pingTool := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { ping.Add(1); return "pong", nil })
	prog := `n = len(calendar.events_for(today))
if n == 3:
    find_empty_slot(calendar, after="2026-03-02T08:00")
else:
    ping()
move_meeting(calendar.find_meeting("Standup", day=today), {"starts_at": "2026-03-02T13:00:00Z", "ends_at": "2026-03-02T13:30:00Z"})`
	model := llm.NewScripted(llm.ScriptToolCalls(codeCall("c1", prog)), llm.ScriptText("done"))
	sess := codeAgent(t, rt, model, cal, weft.UsageLimits{}, pingTool).NewSession()
	runWaiting(t, sess, "go", weft.CodeMode())
	cal.mu.Lock()
	cal.meetings = cal.meetings[:2]
	cal.mu.Unlock()
	res, err := sess.Resume(t.Context(), weft.Approve("c1.2", "ana", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	rets := lastUserMessage(t, model, 1).ToolReturns()
	if len(rets) != 1 || !strings.Contains(string(rets[0].Content), `diverged from its journal: call 1 is \"ping\", but the log recorded \"find_empty_slot\"`) {
		t.Fatalf("program return = %s", rets[0].Content)
	}
	if ping.Load() != 0 {
		t.Fatal("the diverged call ran")
	}
}

func TestVariablesBindAcrossSteps(t *testing.T) {
	rt := newRuntime(t)
	cal := newCalendar()
	var got atomic.Value
	echo, err := toolsets.NewFunc("slot_length", func(_ context.Context, a struct {
		Slot Slot `json:"slot" jsonschema:"the slot"`
	}) (string, error) {
		got.Store(a.Slot)
		return fmt.Sprint(a.Slot.EndsAt.Sub(a.Slot.StartsAt)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(codeCall("c1", `slot = find_empty_slot(calendar, after="2026-03-02T08:00", duration_minutes=45)
cal = calendar
f = lambda: 1`)),
		llm.ScriptText("step one"),
		// The next run: a program reads the kept variables, and a formal
		// call names one of them where an object is expected.
		llm.ScriptToolCalls(codeCall("c2", "print(slot.starts_at, cal)"), call("s1", "slot_length", `{"slot":"slot"}`)),
		llm.ScriptText("step two"),
	)
	a := codeAgent(t, rt, model, cal, weft.UsageLimits{}, echo)
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "one")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	first := lastUserMessage(t, model, 1).ToolReturns()
	if !strings.Contains(string(first[0].Content), "variable f is not kept") {
		t.Fatalf("the unkept variable is not named to the model: %s", first[0].Content)
	}
	res, err = sess.Run(t.Context(), "two")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	rets := lastUserMessage(t, model, 3).ToolReturns()
	var printed string
	_ = json.Unmarshal(rets[0].Content, &printed)
	if printed != "2026-03-02T08:00:00Z <calendar with 3 meetings>" {
		t.Fatalf("second program printed %s", rets[0].Content)
	}
	if string(rets[1].Content) != `"45m0s"` {
		t.Fatalf("the formal call did not bind the variable: %s", rets[1].Content)
	}
	if s, _ := got.Load().(Slot); s.StartsAt.Hour() != 8 {
		t.Fatalf("slot_length got %+v", s)
	}
}
