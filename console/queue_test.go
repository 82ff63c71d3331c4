package console_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestDeferredCall: a deferred call is in the queue with its forms;
// completing it with JSON resumes its run; a result that is not JSON is
// refused.
func TestDeferredCall(t *testing.T) {
	ticket, err := toolsets.NewContextFunc("ticket", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		return nil, toolsets.CallDeferred("a person files the ticket", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, callModel("ticket", `{}`), ticket)
	b := n.browser(t, approverToken)
	session := n.waiting(t)
	page := b.get("/console/queue")
	for _, want := range []string{`class="item kind-deferred"`, "a person files the ticket", `/pending/c1/complete"`, `/pending/c1/fail"`, "deployer"} {
		if !strings.Contains(page, want) {
			t.Errorf("the queue lacks %q", want)
		}
	}
	if got := b.decide(session, "c1", "complete", url.Values{"result": {`{"ticket":`}}); got["status"] != float64(400) {
		t.Errorf("a result that is not JSON: %v", got)
	}
	st, _ := n.agent.Session(session).Status(t.Context())
	if got := b.decide(session, "c1", "complete", url.Values{"result": {`{"ticket":"OPS-12"}`}}); got["ok"] != true {
		t.Fatalf("complete: %v", got)
	}
	n.completes(t, session, st.Active)
	if page := b.get("/console/sessions/" + session); !strings.Contains(page, "deferred call resolved by ana (authenticated)") || !strings.Contains(page, "OPS-12") {
		t.Error("the timeline lacks the completed deferred call")
	}
}

// TestSessionsFilters: the list filters by agent and status through the
// API, and a filter the API refuses is said above the list.
func TestSessionsFilters(t *testing.T) {
	n := okTool(t)
	waiting := n.waiting(t)
	b := n.browser(t, viewerToken)
	tests := []struct {
		query string
		want  bool
		text  string
	}{
		{"agent=deployer", true, ""},
		{"agent=nobody", false, "No session matches."},
		{"status=waiting&waiting=true", true, ""},
		{"status=completed", false, "No session matches."},
		{"since=2000-01-01T00:00:00Z", true, ""},
		{"since=yesterday", false, "want an RFC 3339 time"},
	}
	for _, tc := range tests {
		page := b.get("/console/sessions?" + tc.query)
		if strings.Contains(page, waiting[:8]) != tc.want || !strings.Contains(page, tc.text) {
			t.Errorf("%s: lists the session %v (want %v), says %q: %v", tc.query, strings.Contains(page, waiting[:8]), tc.want, tc.text, strings.Contains(page, tc.text))
		}
	}
}

// TestRunWaitingForTwo: a run waiting for two approvals resumes once,
// with both decisions: the first is kept until the second comes.
func TestRunWaitingForTwo(t *testing.T) {
	model := callsModel(
		llm.ToolCall{ID: "c1", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)},
		llm.ToolCall{ID: "c2", Name: "deploy", Arguments: json.RawMessage(`{"env":"eu"}`)})
	n := startNode(t, model, approvalTool(t, func(env string) (any, error) { return "deployed " + env, nil }))
	b := n.browser(t, approverToken)
	session := n.waiting(t)
	st, _ := n.agent.Session(session).Status(t.Context())
	got := b.decide(session, "c1", "approve", url.Values{})
	if s, _ := got["staged"].(string); !strings.Contains(s, "c2") || got["ok"] == true {
		t.Fatalf("the first of two: %v", got)
	}
	if now, _ := n.agent.Session(session).Status(t.Context()); now.Version != st.Version {
		t.Errorf("the first decision changed the session (version %d → %d)", st.Version, now.Version)
	}
	if got := b.decide(session, "c2", "deny", url.Values{"reason": {"not the EU"}}); got["ok"] != true {
		t.Fatalf("the second of two: %v", got)
	}
	n.completes(t, session, st.Active)
	page := b.get("/console/sessions/" + session)
	if !strings.Contains(page, "deployed prod") || !strings.Contains(page, "not the EU") || strings.Contains(page, "deployed eu") {
		t.Error("the timeline does not show c1 approved and c2 denied")
	}
}

// TestQuestion: a tool's question (an elicitation) is in the queue with
// its message and schema; an answer that does not fit the schema is
// refused with the API's message; one that fits resumes the run.
func TestQuestion(t *testing.T) {
	n := startNode(t, callModel("book", `{}`), askTool(t))
	b := n.browser(t, approverToken)
	session := n.waiting(t)
	page := b.get("/console/queue")
	for _, want := range []string{`class="item kind-elicitation"`, "which date?", "&#34;date&#34;", `/pending/c1/answer"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the queue lacks %q", want)
		}
	}
	if got := b.decide(session, "c1", "answer", url.Values{"answer": {"accept"}, "content": {`{"day":1}`}}); got["ok"] == true || got["status"] != float64(422) {
		t.Errorf("an answer outside the schema: %v", got)
	}
	st, _ := n.agent.Session(session).Status(t.Context())
	if got := b.decide(session, "c1", "answer", url.Values{"answer": {"accept"}, "content": {`{"date":"2026-12-24"}`}}); got["ok"] != true {
		t.Fatalf("answer: %v", got)
	}
	n.completes(t, session, st.Active)
}

// TestRefusedBatchIsKept: a run waits for a question and an approval;
// the answer staged first does not fit its schema, so the batch sent with
// the approval is refused, naming the answer's call. The approval stays
// staged: answering again sends both.
func TestRefusedBatchIsKept(t *testing.T) {
	model := callsModel(
		llm.ToolCall{ID: "c1", Name: "book", Arguments: json.RawMessage(`{}`)},
		llm.ToolCall{ID: "c2", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)})
	n := startNode(t, model, askTool(t), approvalTool(t, func(env string) (any, error) { return "deployed " + env, nil }))
	b := n.browser(t, approverToken)
	session := n.waiting(t)
	st, _ := n.agent.Session(session).Status(t.Context())
	if got := b.decide(session, "c1", "answer", url.Values{"answer": {"accept"}, "content": {`{"day":1}`}}); got["staged"] == nil {
		t.Fatalf("the first of two: %v", got)
	}
	got := b.decide(session, "c2", "approve", url.Values{})
	if msg, _ := got["message"].(string); got["ok"] == true || got["status"] != float64(422) || !strings.Contains(msg, "decision of c1 was refused") {
		t.Fatalf("a batch with an answer outside the schema: %v", got)
	}
	if got := b.decide(session, "c1", "answer", url.Values{"answer": {"accept"}, "content": {`{"date":"2026-12-24"}`}}); got["ok"] != true {
		t.Fatalf("the answer again, with the approval kept: %v", got)
	}
	n.completes(t, session, st.Active)
}
