package mcpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/mcpserve"
	"github.com/weft-run/weft/toolsets"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.(*ActorSystem).Shutdown"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewActorSystemWithConfig.func1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.(*DeadLetterProcess).init.func2"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}

type ticketArgs struct {
	TicketID string `json:"ticket_id"`
}

type deployArgs struct {
	Release string `json:"release"`
}

// fixture is a runtime and an MCP server of three tools: lookup
// (concurrency-safe), deploy (approval required, counting its runs) and a
// hidden one.
type fixture struct {
	rt      *weft.Runtime
	srv     *mcpserve.Server
	deploys atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	f := &fixture{rt: rt}
	lookup, err := toolsets.NewFunc("lookup", func(_ context.Context, a ticketArgs) (map[string]string, error) {
		return map[string]string{"ticket_id": a.TicketID, "status": "open"}, nil
	}, toolsets.WithDescription("Look up a ticket."), toolsets.WithConcurrentSafe(true), toolsets.WithMetadata(map[string]any{"title": "Ticket lookup"}))
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := toolsets.NewFunc("deploy", func(_ context.Context, a deployArgs) (string, error) {
		f.deploys.Add(1)
		return "deployed " + a.Release, nil
	}, toolsets.WithDescription("Deploy a release."))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := toolsets.NewFunc("rotate_keys", func(context.Context, struct{}) (string, error) { return "rotated", nil },
		toolsets.WithVisibility(toolsets.Hidden))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := toolsets.New("ops", []toolsets.Tool{deploy, secret})
	if err != nil {
		t.Fatal(err)
	}
	f.srv, err = mcpserve.New(rt, mcpserve.Config{Agent: weft.AgentConfig{Tools: []toolsets.Tool{lookup}, Toolsets: []toolsets.Toolset{ops}, ApprovalRequiredTools: []string{"deploy"}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// client connects an SDK client to the server in memory.
func (f *fixture) client(t *testing.T) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// The tool list is the agent's visible tools with their schemas and the
// annotations their flags give.
func TestToolsAreListedWithSchemasAndAnnotations(t *testing.T) {
	f := newFixture(t)
	res, err := f.client(t).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	if len(got) != 2 || got["lookup"] == nil || got["deploy"] == nil {
		t.Fatalf("listed %v, want lookup and deploy (not the hidden tool)", res.Tools)
	}
	if a := got["lookup"].Annotations; a == nil || !a.IdempotentHint || a.Title != "Ticket lookup" || a.DestructiveHint != nil {
		t.Errorf("lookup annotations %+v, want idempotent, titled, destructiveness unset", a)
	}
	if a := got["deploy"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint {
		t.Errorf("deploy annotations %+v, want destructive (approval required), not idempotent", a)
	}
	schema, _ := json.Marshal(got["lookup"].InputSchema)
	if !strings.Contains(string(schema), `"ticket_id"`) {
		t.Errorf("lookup input schema %s does not name ticket_id", schema)
	}
}

// A call runs as a weft run: its return is the result, and the run is in
// the log with the MCP call as its input.
func TestCallRunsAsARecordedRun(t *testing.T) {
	f := newFixture(t)
	res := call(t, f.client(t), "lookup", map[string]any{"ticket_id": "T-7"})
	if res.IsError {
		t.Fatalf("lookup failed: %s", text(res))
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil || out["ticket_id"] != "T-7" {
		t.Errorf("result %q (%v), want the lookup of T-7", text(res), err)
	}
	var started []events.RunStarted
	for ev, err := range f.rt.Store().ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeRunStarted {
			d, _ := events.Decode(ev)
			started = append(started, d.(events.RunStarted))
		}
	}
	if len(started) != 1 || !strings.Contains(string(started[0].Input), `\"tool\":\"lookup\"`) || started[0].Agent != mcpserve.DefaultName {
		t.Errorf("run.started %+v, want one run of agent %q whose input is the lookup call", started, mcpserve.DefaultName)
	}
}

// Arguments that do not fit the schema are refused by weft's registry, as
// an error result the client's model can correct, and no tool runs.
func TestInvalidArgumentsAreAnErrorResult(t *testing.T) {
	f := newFixture(t)
	res := call(t, f.client(t), "lookup", map[string]any{"ticket_id": 7})
	if !res.IsError || !strings.Contains(text(res), "ticket_id") {
		t.Errorf("result %+v %q, want an error result about ticket_id", res, text(res))
	}
}

// An approval-required call answers "approval pending" at once and waits
// in the HITL queue; sent again after the approval it returns the tool's
// result, once; a new call asks again. A denied call is an error result
// with the reason, and the tool never runs.
func TestApprovalRequiredCalls(t *testing.T) {
	f := newFixture(t)
	cs := f.client(t)
	args := map[string]any{"release": "v1.4.2"}
	first := call(t, cs, "deploy", args)
	details, _ := first.StructuredContent.(map[string]any)
	if !first.IsError || details["status"] != "approval_pending" || !strings.Contains(text(first), "approval") {
		t.Fatalf("first call: %+v %q, want approval_pending", first, text(first))
	}
	if again := call(t, cs, "deploy", args); !again.IsError || again.StructuredContent.(map[string]any)["session_id"] != details["session_id"] {
		t.Fatalf("the call sent again before a decision: %q, want the same pending call", text(again))
	}
	if n := f.deploys.Load(); n != 0 {
		t.Fatalf("deploy ran %d times before its approval", n)
	}
	// A person approves it (any node, any process: here the facade).
	sess := f.srv.Agent().Session(details["session_id"].(string))
	if _, err := sess.Resume(t.Context(), weft.Approve(details["call_id"].(string), "alice", nil)); err != nil {
		t.Fatal(err)
	}
	done := call(t, cs, "deploy", args)
	if done.IsError || text(done) != "deployed v1.4.2" {
		t.Fatalf("after the approval: %+v %q, want the deploy's result", done, text(done))
	}
	fresh := call(t, cs, "deploy", args)
	if d, _ := fresh.StructuredContent.(map[string]any); !fresh.IsError || d["status"] != "approval_pending" || d["session_id"] == details["session_id"] {
		t.Fatalf("a new call after the result was delivered: %q, want a new pending approval", text(fresh))
	}
	d := fresh.StructuredContent.(map[string]any)
	if _, err := f.srv.Agent().Session(d["session_id"].(string)).Resume(t.Context(), weft.Deny(d["call_id"].(string), "bob", "freeze until Monday")); err != nil {
		t.Fatal(err)
	}
	denied := call(t, cs, "deploy", args)
	if !denied.IsError || !strings.Contains(text(denied), "freeze until Monday") {
		t.Errorf("after the denial: %+v %q, want an error result with the reason", denied, text(denied))
	}
	if n := f.deploys.Load(); n != 1 {
		t.Errorf("deploy ran %d times, want once (the approved call)", n)
	}
}

// Over streamable HTTP a token, when set, is required: without it (or
// with another) the request is refused before any tool runs.
func TestHTTPRequiresTheToken(t *testing.T) {
	f := newFixture(t)
	const token = "s3cret-token-value"
	srv := httptest.NewServer(f.srv.Handler(token))
	defer srv.Close()
	connect := func(tok string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearer{tok}}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	}
	for _, tok := range []string{"", "wrong"} {
		if cs, err := connect(tok); err == nil {
			cs.Close()
			t.Errorf("token %q: connected, want a refusal", tok)
		} else if strings.Contains(err.Error(), token) {
			t.Errorf("the refusal %q shows the token", err)
		}
	}
	cs, err := connect(token)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := call(t, cs, "lookup", map[string]any{"ticket_id": "T-9"}); res.IsError || !strings.Contains(text(res), "T-9") {
		t.Errorf("lookup over HTTP: %q", text(res))
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A configuration that cannot be served is refused: a model of its own, a
// toolset that can be listed only when prepared.
func TestConfigErrors(t *testing.T) {
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	dyn, err := toolsets.NewDynamic("dyn", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]mcpserve.Config{
		"a model":         {Agent: weft.AgentConfig{Model: llm.AlwaysText("x")}},
		"dynamic toolset": {Name: "d", Agent: weft.AgentConfig{Toolsets: []toolsets.Toolset{dyn}}},
	} {
		if _, err := mcpserve.New(rt, cfg); !errors.Is(err, mcpserve.ErrConfig) {
			t.Errorf("%s: New = %v, want ErrConfig", name, err)
		}
	}
}
