package console_test

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// treeNode starts a node whose agent "lead" calls the agent "deployer" as
// a tool twice in one response (c1, c2); each child run asks to deploy
// and waits for an approval. It returns the node and the parent session
// once both children wait.
func treeNode(t *testing.T) (*node, string) {
	t.Helper()
	n := startNodeAgents(t, memstore.New(), nil, func(rt *weft.Runtime) []*weft.Agent {
		deployer, err := rt.NewAgent("deployer", weft.AgentConfig{Model: callModel("deploy", `{"env":"prod"}`),
			Tools: []toolsets.Tool{approvalTool(t, func(env string) (any, error) { return "deployed " + env, nil })}})
		if err != nil {
			t.Fatal(err)
		}
		ask, err := weft.AgentTool(deployer)
		if err != nil {
			t.Fatal(err)
		}
		lead, err := rt.NewAgent("lead", weft.AgentConfig{Model: twoDelegations(), Tools: []toolsets.Tool{ask}})
		if err != nil {
			t.Fatal(err)
		}
		return []*weft.Agent{lead, deployer}
	})
	s := n.agent.NewSession()
	res, err := s.Run(t.Context(), "ship it")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	// The parent waits as soon as its calls deferred; the children ask for
	// their approvals after.
	b := n.browser(t, approverToken)
	waitFor(t, func() bool { return strings.Count(b.get("/console/queue"), `class="item kind-approval"`) == 2 })
	return n, s.ID()
}

// twoDelegations calls deployer twice (c1, c2), then joins the returns.
func twoDelegations() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if rets := req.Messages[len(req.Messages)-1].ToolReturns(); len(rets) > 0 {
			return &llm.Response{Text: "both done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "deployer", Arguments: json.RawMessage(`{"prompt":"eu"}`)},
			{ID: "c2", Name: "deployer", Arguments: json.RawMessage(`{"prompt":"us"}`)},
		}}, nil
	})
}

// children reads the parent session's page and returns the child
// sessions its sub-run links name, in order.
func children(t *testing.T, page string) []string {
	t.Helper()
	var out []string
	for _, part := range strings.Split(page, `<a class="subrun" href="/console/sessions/`)[1:] {
		id, _, _ := strings.Cut(part, "#")
		out = append(out, id)
	}
	return out
}

// TestSessionRunTree: the parent's session page links each sub-run's
// session with its status; a child's page links up to the parent
// session, run and call; a viewer sees the same links; deciding a child
// in the console changes the status the parent's page shows.
func TestSessionRunTree(t *testing.T) {
	n, parent := treeNode(t)
	st, err := n.agent.Session(parent).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	parentRun := st.Active
	for _, token := range []string{approverToken, viewerToken} {
		b := n.browser(t, token)
		page := b.get("/console/sessions/" + parent)
		kids := children(t, page)
		if len(kids) != 2 || kids[0] == kids[1] {
			t.Fatalf("parent page names sub-run sessions %v, want two", kids)
		}
		if got := strings.Count(page, `<span class="status-waiting">waiting</span> · call c`); got != 2 {
			t.Errorf("parent page shows %d waiting sub-runs, want 2", got)
		}
		if strings.Contains(page, `class="parent"`) {
			t.Error("a root run's page claims a parent")
		}
		for i, kid := range kids {
			child := html.UnescapeString(b.get("/console/sessions/" + kid))
			call := []string{"c1", "c2"}[i]
			for _, want := range []string{
				`class="parent-session" href="/console/sessions/` + parent + `"`,
				`class="parent-run" href="/console/sessions/` + parent + `#run-` + parentRun + `"`,
				`class="parent-call" href="/console/sessions/` + parent + `#call-` + parentRun + `-` + call + `"`,
				"sub-run (depth 1) of",
			} {
				if !strings.Contains(child, want) {
					t.Errorf("child page %d lacks %q", i, want)
				}
			}
		}
		if !strings.Contains(page, `id="call-`+parentRun+`-c1"`) || !strings.Contains(page, `id="run-`+parentRun+`"`) {
			t.Error("the parent page lacks the anchors its children link to")
		}
	}

	b := n.browser(t, approverToken)
	kids := children(t, b.get("/console/sessions/"+parent))
	if got := b.decide(kids[0], "c1", "approve", url.Values{}); got["ok"] != true {
		t.Fatalf("approve the first child: %v", got)
	}
	waitFor(t, func() bool {
		return strings.Contains(b.get("/console/sessions/"+parent), `<span class="status-completed">completed</span> · call c1`)
	})
}

// TestQueueParentChain: a sub-run's queue item shows its parent chain,
// linking the parent's call.
func TestQueueParentChain(t *testing.T) {
	n, parent := treeNode(t)
	st, err := n.agent.Session(parent).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(n.browser(t, viewerToken).get("/console/queue"))
	if got := strings.Count(page, `class="item kind-approval"`); got != 2 {
		t.Fatalf("the queue shows %d approvals, want the children's 2", got)
	}
	for _, call := range []string{"c1", "c2"} {
		want := `<a class="parent-link" href="/console/sessions/` + parent + `#call-` + st.Active + `-` + call + `">run ` + st.Active[:8] + `… · call ` + call + `</a> → this run`
		if !strings.Contains(page, want) {
			t.Errorf("the queue lacks the parent chain %q", want)
		}
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the condition did not hold in 10 s")
}
