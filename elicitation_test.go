package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/projections"
	"github.com/weft-run/weft/toolsets"
)

type bookArgs struct {
	What string `json:"what"`
}

// booking asks a person which date to book, then books it; it records
// every answer it was run again with.
func booking(t *testing.T, answers *[]toolsets.Elicitation, runs *atomic.Int32) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewContextFunc("book", func(_ context.Context, tc *toolsets.ToolContext, a bookArgs) (string, error) {
		runs.Add(1)
		if tc.Elicitation == nil {
			return "", toolsets.ElicitationRequired("Which date should I book "+a.What+" on?",
				json.RawMessage(`{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`),
				map[string]any{"request_state": "opaque-42"})
		}
		*answers = append(*answers, *tc.Elicitation)
		if tc.Elicitation.Action != toolsets.ElicitAccept {
			return "not booked: " + tc.Elicitation.Action, nil
		}
		var c struct {
			Date string `json:"date"`
		}
		if err := json.Unmarshal(tc.Elicitation.Content, &c); err != nil {
			return "", err
		}
		return "booked " + a.What + " on " + c.Date, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// A tool that asks a person for input suspends the run with an
// elicitation pending (its message and schema), in the HITL queue; an
// answer that does not fit the schema is refused; a fitting one runs the
// tool again with it, and the request's metadata comes back with it.
func TestElicitationThroughTheHITLQueue(t *testing.T) {
	rt := newRuntime(t)
	var answers []toolsets.Elicitation
	var runs atomic.Int32
	model := llm.NewScripted(llm.ScriptToolCalls(call("b1", "book", `{"what":"the venue"}`)), llm.ScriptText("done"))
	s := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{booking(t, &answers, &runs)}}).NewSession()
	res, err := s.Run(t.Context(), "book it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Elicitations) != 1 {
		t.Fatalf("run %s, pending %+v; want one elicitation", res.Status, res.Pending)
	}
	el := res.Pending.Elicitations[0]
	if el.ID != "b1" || el.Kind != weft.PendingElicitation || !strings.Contains(el.Reason, "Which date") || el.Metadata["requested_schema"] == nil {
		t.Errorf("pending elicitation %+v", el)
	}

	q := projections.NewQueue()
	if _, err := projections.NewRunner(rt.Store(), []projections.Projection{q}).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	items := q.Items()
	if len(items) != 1 || items[0].Kind != projections.PendingElicitation || !strings.Contains(items[0].Message, "Which date") || !strings.Contains(string(items[0].Schema), `"date"`) {
		t.Fatalf("HITL queue %+v, want the elicitation with its message and schema", items)
	}

	for name, bad := range map[string]weft.Decision{
		"content off the schema": weft.Answer("b1", "alice", toolsets.ElicitAccept, map[string]any{"day": 24}),
		"no content":             weft.Answer("b1", "alice", toolsets.ElicitAccept, nil),
		"unknown action":         weft.Answer("b1", "alice", "maybe", nil),
		"an approval":            weft.Approve("b1", "alice", nil),
	} {
		if _, err := s.Resume(t.Context(), bad); !errors.Is(err, weft.ErrWrongDecision) {
			t.Errorf("%s: Resume = %v, want ErrWrongDecision", name, err)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the tool ran %d times before the answer, want 1", n)
	}
	done, err := s.Resume(t.Context(), weft.Answer("b1", "alice", toolsets.ElicitAccept, map[string]any{"date": "2026-12-24"}))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != weft.StatusCompleted {
		t.Fatalf("after the answer: %s (%v)", done.Status, done.Err)
	}
	if len(answers) != 1 || answers[0].AnsweredBy != "alice" || string(answers[0].Content) != `{"date":"2026-12-24"}` ||
		answers[0].Request.Metadata["request_state"] != "opaque-42" || !strings.Contains(string(answers[0].Request.Schema), `"date"`) {
		t.Errorf("the tool was run again with %+v", answers)
	}
	var returned []string
	for _, ev := range streamEvents(t, rt, s.ID()) {
		switch ev.Type {
		case events.TypeElicitationRequested, events.TypeElicitationAnswered:
			returned = append(returned, string(ev.Type))
		case events.TypeToolReturned:
			d, _ := events.Decode(ev)
			var ret toolsets.Return
			_ = json.Unmarshal(d.(events.ToolReturned).Return, &ret)
			returned = append(returned, string(ret.Kind)+" "+string(ret.Content))
		}
	}
	want := `[elicitation_required "input required: Which date should I book the venue on?" elicitation.requested elicitation.answered success "booked the venue on 2026-12-24"]`
	if got := strings.Join(returned, " "); "["+got+"]" != want {
		t.Errorf("recorded %s\nwant     %s", "["+got+"]", want)
	}
	q = projections.NewQueue()
	if _, err := projections.NewRunner(rt.Store(), []projections.Projection{q}).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if items := q.Items(); len(items) != 0 {
		t.Errorf("HITL queue after the answer %+v, want empty", items)
	}
}

// A declined elicitation runs the tool again with the decline, and no
// content.
func TestElicitationDeclined(t *testing.T) {
	rt := newRuntime(t)
	var answers []toolsets.Elicitation
	var runs atomic.Int32
	model := llm.NewScripted(llm.ScriptToolCalls(call("b1", "book", `{"what":"a table"}`)), llm.ScriptText("ok"))
	s := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{booking(t, &answers, &runs)}}).NewSession()
	if _, err := s.Run(t.Context(), "book"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Resume(t.Context(), weft.Answer("b1", "bob", toolsets.ElicitDecline, nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if len(answers) != 1 || answers[0].Action != toolsets.ElicitDecline || len(answers[0].Content) != 0 {
		t.Errorf("answers %+v, want one decline", answers)
	}
}
