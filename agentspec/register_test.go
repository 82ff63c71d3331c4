package agentspec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// chatServer serves the Chat Completions API as an OpenAI-compatible
// server does, streamed: a call of fetch_ticket, then a write_file of
// notes.txt, then a text in pieces. It records the requests'
// Authorization headers and bodies.
type chatServer struct {
	mu     sync.Mutex
	auth   []string
	bodies []string
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.bodies = append(s.bodies, string(body))
	n := len(s.bodies)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta string, finish string) {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", n, delta, f)
	}
	call := func(id, name, args string) {
		chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, id, name), "")
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, args), "")
		chunk(`{}`, "tool_calls")
	}
	switch n {
	case 1:
		call("call_fetch", "fetch_ticket", `{"ticket_id":"T-7"}`)
	case 2:
		call("call_write", "write_file", `{"path":"notes.txt","content":"T-7: printer jam, fixed."}`)
	default:
		for _, piece := range []string{"Ticket T-7 ", "is noted."} {
			chunk(fmt.Sprintf(`{"role":"assistant","content":%q}`, piece), "")
		}
		chunk(`{}`, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

const e2eSpec = `version: 1
agents:
  - name: support
    model:
      name: openai-compatible:test-model
      base_url: %s
      api_key_env: AGENTSPEC_E2E_KEY
      retry: {max_attempts: 2, initial_delay: 10ms}
    instructions:
      - You answer support tickets and keep notes.
    settings: {temperature: 0.3, seed: 42}
    limits: {requests: 5, tool_calls: 4}
    toolsets:
      - filesystem: {root: work}
%s    approval_required: [fetch_ticket]
    trusted_tools: [write_file]
`

type ticketArgs struct {
	TicketID string `json:"ticket_id"`
}

func fetchTicket(t *testing.T) toolsets.Tool {
	t.Helper()
	tool, err := toolsets.NewFunc("fetch_ticket", func(_ context.Context, a ticketArgs) (string, error) {
		return a.TicketID + ": the printer jams", nil
	}, toolsets.WithDescription("Fetch a support ticket by id."))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// writeSpec writes a spec file (and its work root) into a new directory.
func writeSpec(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mcpToken is the bearer token the MCP server of mcpTickets wants.
const mcpToken = "mcp-token-agentspec-55aa66bb"

// mcpTickets serves fetch_ticket from an MCP server over streamable HTTP
// that refuses requests without the bearer token, and returns the spec's
// toolset entry for it, its token named by variable.
func mcpTickets(t *testing.T) string {
	t.Helper()
	t.Setenv("AGENTSPEC_E2E_MCP_TOKEN", mcpToken)
	server := sdk.NewServer(&sdk.Implementation{Name: "tickets", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "fetch_ticket", Description: "Fetch a support ticket by id.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a ticketArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.TicketID + ": the printer jams"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return fmt.Sprintf("      - mcp:\n          name: tickets\n          url: %s/mcp\n          headers:\n            Authorization: {env: AGENTSPEC_E2E_MCP_TOKEN, prefix: \"Bearer \"}\n", srv.URL)
}

// serveWorker serves tools from a worker (of pool, when set) on rt's bus
// until the test ends.
func serveWorker(t *testing.T, rt *weft.Runtime, pool string, tools ...toolsets.Tool) {
	t.Helper()
	var opts []worker.Option
	if pool != "" {
		opts = append(opts, worker.WithPool(pool))
	}
	w, err := worker.New(rt.Conn(), tools, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

func startRuntime(t *testing.T) *weft.Runtime {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// A declared agent runs end to end against an OpenAI-compatible server:
// fetch_ticket (a Go tool added by name, or a remote worker's, served
// from the core queue group or a pool) waits for the approval the spec
// asks, the filesystem tool the spec trusts writes without one, the
// settings and key reach the server, and run.started records the agent's
// version; the key appears in no event.
func TestRegisterRunsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		toolset string // more of the spec's toolsets
		extra   bool   // fetch_ticket as a Go tool
		pool    string // the worker's pool; without extra
		mcp     bool   // fetch_ticket from an MCP server over HTTP
	}{
		{name: "Go tool", extra: true},
		{name: "remote tool", toolset: "      - remote: {tools: [fetch_ticket]}\n"},
		{name: "pooled remote tool", toolset: "      - remote: {tools: [fetch_ticket]}\n", pool: "tickets"},
		{name: "MCP tool", mcp: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mcp {
				tc.toolset = mcpTickets(t)
			}
			testEndToEnd(t, tc.toolset, tc.extra || tc.mcp, tc.pool)
		})
	}
}

func testEndToEnd(t *testing.T, toolset string, goTool bool, pool string) {
	srv := &chatServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	const secret = "sk-agentspec-e2e-7a6b5c4d3e2f"
	t.Setenv("AGENTSPEC_E2E_KEY", secret)
	path := writeSpec(t, fmt.Sprintf(e2eSpec, hs.URL+"/v1", toolset))
	f, err := agentspec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rt := startRuntime(t)
	extra := map[string][]toolsets.Tool{}
	switch {
	case strings.Contains(toolset, "mcp:"):
	case goTool:
		extra["support"] = []toolsets.Tool{fetchTicket(t)}
	default:
		serveWorker(t, rt, pool, fetchTicket(t))
	}
	hosted, err := f.Register(t.Context(), rt, extra)
	if err != nil {
		t.Fatal(err)
	}
	defer hosted.Close()
	agent := hosted.Agent("support")
	if agent == nil || len(hosted.Agents) != 1 {
		t.Fatalf("Hosted.Agents = %v, want the support agent", hosted.Agents)
	}
	sess := agent.NewSession()
	res, err := sess.Run(t.Context(), "Note ticket T-7.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 || res.Pending.Approvals[0].Tool != "fetch_ticket" {
		t.Fatalf("first run: %s, pending %+v; want waiting for the approval of fetch_ticket", res.Status, res.Pending)
	}
	res, err = sess.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "erin", nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted || res.Output != "Ticket T-7 is noted." {
		t.Fatalf("after the approval: %s %q (pending %+v), want completed with the answer (write_file trusted)", res.Status, res.Output, res.Pending)
	}
	notes, err := os.ReadFile(filepath.Join(filepath.Dir(path), "work", "notes.txt"))
	if err != nil || string(notes) != "T-7: printer jam, fixed." {
		t.Errorf("notes.txt = %q, %v", notes, err)
	}

	srv.mu.Lock()
	auth, bodies := srv.auth, srv.bodies
	srv.mu.Unlock()
	if len(auth) != 3 || auth[0] != "Bearer "+secret {
		t.Errorf("%d requests, the first with Authorization %q: want 3 with the key", len(auth), auth[0])
	}
	var first struct {
		Temperature float64 `json:"temperature"`
		Seed        int64   `json:"seed"`
		Messages    []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &first); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range first.Tools {
		tools = append(tools, tl.Function.Name)
	}
	if first.Temperature != 0.3 || first.Seed != 42 || !strings.Contains(bodies[0], "You answer support tickets and keep notes.") ||
		!strings.Contains(strings.Join(tools, ","), "fetch_ticket") || !strings.Contains(strings.Join(tools, ","), "write_file") {
		t.Errorf("first request %s: want the spec's settings, instructions and both tools", bodies[0])
	}

	evs, err := rt.Store().ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	var started int
	for _, ev := range evs {
		raw, _ := json.Marshal(ev)
		if strings.Contains(string(raw), secret) || strings.Contains(string(raw), mcpToken) {
			t.Errorf("event %s holds a secret", ev.Type)
		}
		if ev.Type != events.TypeRunStarted {
			continue
		}
		started++
		var rs events.RunStarted
		if err := json.Unmarshal(ev.Data, &rs); err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		if err := json.Unmarshal(rs.Metadata, &md); err != nil || md[agentspec.MetaVersion] != f.AgentVersion("support") || hosted.Version("support") != f.AgentVersion("support") {
			t.Errorf("run.started metadata %s (%v): want %s = %s", rs.Metadata, err, agentspec.MetaVersion, f.AgentVersion("support"))
		}
	}
	if started != 1 {
		t.Errorf("%d run.started events, want 1", started)
	}
}
