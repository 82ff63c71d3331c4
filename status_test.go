package weft_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestSessionStatus: Status shows a session's runs in order, the active
// one and what it waits for, without any actors type.
func TestSessionStatus(t *testing.T) {
	rt := newRuntime(t)
	probe := tool(t, "probe", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "ok", nil })
	model := llm.NewScripted(llm.ScriptText("hello"), llm.ScriptToolCalls(call("c1", "probe", `{}`)), llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{probe}, ApprovalRequiredTools: []string{"probe"}})
	s := a.NewSession()

	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&weft.SessionStatus{SessionID: s.ID()}, st); diff != "" {
		t.Errorf("status of a new session (-want +got):\n%s", diff)
	}

	first, err := s.Run(t.Context(), "greet")
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := s.Run(t.Context(), "probe it")
	if err != nil || waiting.Status != weft.StatusWaiting {
		t.Fatalf("second run = %+v, %v; want waiting", waiting, err)
	}
	ignore := cmpopts.IgnoreFields(weft.RunSummary{}, "Usage")
	st, err = s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := &weft.SessionStatus{SessionID: s.ID(), Version: st.Version, Active: waiting.RunID, Runs: []weft.RunSummary{
		{ID: first.RunID, Agent: a.Name(), Prompt: "greet", Status: weft.StatusCompleted, Output: "hello"},
		{ID: waiting.RunID, Agent: a.Name(), Prompt: "probe it", Status: weft.StatusWaiting, Pending: waiting.Pending},
	}}
	if diff := cmp.Diff(want, st, ignore); diff != "" {
		t.Errorf("status of a waiting session (-want +got):\n%s", diff)
	}
	if n := len(streamEvents(t, rt, s.ID())); st.Version != uint64(n) {
		t.Errorf("version %d, want %d (the events of the session)", st.Version, n)
	}
	if p := st.Runs[1].Pending.Approvals; len(p) != 1 || p[0].ID != "c1" || p[0].Tool != "probe" {
		t.Errorf("pending approvals %+v, want c1 of probe", p)
	}
	if r, ok := st.ActiveRun(); !ok || r.ID != waiting.RunID {
		t.Errorf("ActiveRun = %+v, %v; want %s", r, ok, waiting.RunID)
	}
	if r, ok := st.Run(first.RunID); !ok || r.Usage.Requests != 1 {
		t.Errorf("Run(%s) = %+v, %v; want the first run and its one request", first.RunID, r, ok)
	}

	done, err := s.Resume(t.Context(), weft.Approve("c1", "alice", nil))
	if err != nil || done.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", done, err)
	}
	st, err = s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.ActiveRun(); ok || st.Active != "" {
		t.Errorf("active run %q after the resume, want none", st.Active)
	}
	if r := st.Runs[1]; r.Status != weft.StatusCompleted || r.Output != "done" || len(r.Pending.Approvals) != 0 {
		t.Errorf("resumed run %+v, want completed with output done and nothing pending", r)
	}
}
