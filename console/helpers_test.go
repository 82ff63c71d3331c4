package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/console"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/internal/logtest"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.(*ActorSystem).Shutdown"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewActorSystemWithConfig.func1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.(*DeadLetterProcess).init.func2"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("github.com/chromedp/chromedp.(*Browser).run"),
	)
}

const (
	approverToken = "approver-token-0123456789"
	viewerToken   = "viewer-token-0123456789"
)

// node is a runtime with the API and the console on a test server.
type node struct {
	rt    *weft.Runtime
	store events.Store
	srv   *httptest.Server
	logs  *logtest.Buffer
	agent *weft.Agent
}

// deployAgent asks for deploy(env) with the args given, needs approval,
// and returns the result the tool gives; then answers with the text.
type deployArgs struct {
	Env string `json:"env" jsonschema:"the target environment"`
}

// startNode starts a node whose agent "deployer" calls the tools of
// script (one model response each, then "done").
func startNode(t *testing.T, model llm.Model, tools ...toolsets.Tool) *node {
	t.Helper()
	return startNodeStore(t, memstore.New(), nil, model, tools...)
}

func startNodeStore(t *testing.T, store events.Store, readStore events.Store, model llm.Model, tools ...toolsets.Tool) *node {
	t.Helper()
	return startNodeAgents(t, store, readStore, func(rt *weft.Runtime) []*weft.Agent {
		a, err := rt.NewAgent("deployer", weft.AgentConfig{Model: model, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		return []*weft.Agent{a}
	})
}

// startNodeAgents starts a node with the agents agents registers, the
// first being the node's agent.
func startNodeAgents(t *testing.T, store events.Store, readStore events.Store, agents func(*weft.Runtime) []*weft.Agent) *node {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	all := agents(rt)
	a := all[0]
	tokens, err := httpapi.ParseTokens(strings.NewReader("ana approver "+approverToken+"\nvera viewer "+viewerToken+"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	api, err := httpapi.New(rt, httpapi.Config{Agents: all, Tokens: tokens, Logger: logger, KeepAlive: 200e6})
	if err != nil {
		t.Fatal(err)
	}
	if readStore == nil {
		readStore = store
	}
	c, err := console.New(console.Config{API: api, Store: readStore, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle(console.Prefix+"/", c)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { api.Close(); srv.Close() })
	return &node{rt: rt, store: store, srv: srv, logs: logs, agent: a}
}

// browser is an HTTP client with a cookie jar, signed in with token.
type browser struct {
	t    *testing.T
	n    *node
	c    *http.Client
	csrf string
}

func (n *node) browser(t *testing.T, token string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{t: t, n: n, c: &http.Client{Jar: jar}}
	page := b.get("/console/signin")
	b.csrf = csrfOf(t, page)
	if token != "" {
		status, _ := b.post("/console/signin", url.Values{"token": {token}, "csrf": {b.csrf}}, nil)
		if status != http.StatusOK {
			t.Fatalf("sign in: %d", status)
		}
	}
	return b
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]+)">`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

func (b *browser) get(path string) string {
	b.t.Helper()
	resp, err := b.c.Get(b.n.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	return string(body)
}

// post posts form with headers; it returns the status and body.
func (b *browser) post(path string, form url.Values, header http.Header) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.n.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// decide posts a decision as the page's script does.
func (b *browser) decide(session, call, action string, form url.Values) map[string]any {
	b.t.Helper()
	status, body := b.post("/console/sessions/"+session+"/pending/"+call+"/"+action, form, http.Header{"X-Csrf-Token": {b.csrf}, "Accept": {"application/json"}})
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		b.t.Fatalf("decision answer %d %q: %v", status, body, err)
	}
	out["status"] = float64(status)
	return out
}

// approvalTool is deploy(env): approval first, then result(env).
func approvalTool(t *testing.T, result func(env string) (any, error)) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, a deployArgs) (any, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("deploy to "+a.Env, map[string]any{"risk": "high"})
		}
		return result(a.Env)
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// askTool is book(): it asks a person "which date?" (an elicitation
// whose answer has a date), then returns "booked " and the answer.
func askTool(t *testing.T) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewContextFunc("book", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		if tc.Elicitation == nil {
			return nil, toolsets.ElicitationRequired("which date?", json.RawMessage(`{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`), nil)
		}
		return "booked " + string(tc.Elicitation.Content), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// callsModel asks for calls in one response, then answers "done".
func callsModel(calls ...llm.ToolCall) llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		for _, p := range last.Parts {
			if _, ok := p.(llm.ToolReturn); ok {
				return &llm.Response{Text: "done"}, nil
			}
		}
		return &llm.Response{ToolCalls: calls}, nil
	})
}

// callModel asks for one call c1 of tool with args, then answers "done".
func callModel(tool, args string) llm.Model {
	return callsModel(llm.ToolCall{ID: "c1", Name: tool, Arguments: json.RawMessage(args)})
}

// waiting starts a run and waits until it waits.
func (n *node) waiting(t *testing.T) string {
	t.Helper()
	s := n.agent.NewSession()
	res, err := s.Run(t.Context(), "deploy please")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	return s.ID()
}

// completes waits for run of session to end and checks that it completed.
func (n *node) completes(t *testing.T, session, run string) {
	t.Helper()
	if res, err := n.agent.Session(session).Wait(t.Context(), run); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
}
