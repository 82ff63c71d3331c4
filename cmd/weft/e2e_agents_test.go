package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
)

// compatEnv set to "require" makes the end-to-end test fail, not skip,
// when node or @dwmkerr/mock-llm is missing (.ci/run sets it).
const compatEnv = "WEFT_OPENAI_COMPAT"

// e2eMockRules are mock-llm's rules (the last matching rule wins): a
// prompt gets a write_file call, which the filesystem toolset holds for
// an approval; the tool's result gets the answer.
const e2eMockRules = `rules:
  - path: "/v1/chat/completions"
    method: "POST"
    match: "@"
    response:
      status: 200
      content: |
        {"id": "c1", "object": "chat.completion", "created": 1764590000, "model": "m",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
           "tool_calls": [{"id": "call_write", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\":\"notes.txt\",\"content\":\"T-7 fixed\"}"}}]}}]}
  - path: "/v1/chat/completions"
    method: "POST"
    match: "body.messages[-1].role == 'tool'"
    response:
      status: 200
      content: |
        {"id": "c2", "object": "chat.completion", "created": 1764590001, "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "noted"}}]}
`

// startMockLLM starts @dwmkerr/mock-llm (installed by .ci/run under
// llm/openai/testdata/mockllm) as a process on a free port with rules,
// and returns its base URL.
func startMockLLM(t *testing.T, rules string) string {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := what + ": run `npm install` in llm/openai/testdata/mockllm (as .ci/run does)"
		if os.Getenv(compatEnv) == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set " + compatEnv + "=require to fail instead of skipping")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	main, _ := filepath.Abs(filepath.Join("..", "..", "llm", "openai", "testdata", "mockllm", "node_modules", "@dwmkerr", "mock-llm", "dist", "main.js"))
	if _, err := os.Stat(main); err != nil {
		missing("@dwmkerr/mock-llm is not installed")
	}
	cfg := filepath.Join(t.TempDir(), "mock-llm.yaml")
	if err := os.WriteFile(cfg, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(node, main, "--config", cfg)
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProcess(t, cmd, func() bool {
		resp, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startProcess starts cmd, killed at cleanup, and waits until ready says
// so (nil: not at all).
func startProcess(t *testing.T, cmd *exec.Cmd, ready func() bool) *strings.Builder {
	t.Helper()
	var out strings.Builder
	if cmd.Stderr == nil {
		cmd.Stderr = &out
	}
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(60 * time.Second) // a bound on a hang
	for ready != nil && !ready() {
		select {
		case err := <-exited:
			t.Fatalf("%s exited: %v\n%s", cmd.Path, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up\n%s", cmd.Path, out.String())
		}
	}
	return &out
}

// A real weft serve --agents process with the HTTP API, its model a real
// OpenAI-compatible server process: no token is 401 and a viewer's start
// 403; two starts with one Idempotency-Key start one run; the session's
// event stream, cut at approval.requested and resumed with Last-Event-ID,
// gives versions 1..n once each; the approval records the approver
// token's principal as decided_by, authenticated.
func TestServeAgentsEndToEnd(t *testing.T) {
	model := startMockLLM(t, e2eMockRules)
	dir := t.TempDir()
	bin := filepath.Join(dir, "weft")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "agents.yaml")
	// mock-llm's streamed tool calls are broken: the agent asks without
	// streaming.
	if err := os.WriteFile(spec, []byte(`version: 1
agents:
  - name: notes
    model: {name: "openai-compatible:m", base_url: "`+model+`/v1", stream: false}
    instructions: [Keep notes.]
    toolsets:
      - filesystem: {root: work}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	const viewer, operator, approver = "vera-viewer-token-0123456789", "oscar-operator-token-0123456789", "alice-approver-token-0123456789"
	tokens := writeTokens(t, dir, "vera viewer "+viewer, "oscar operator "+operator, "alice approver,viewer "+approver)
	cmd := exec.Command(bin, "serve", "--agents", spec, "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:-1", "--http", "127.0.0.1:0", "--http-tokens", tokens, "--json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startProcess(t, cmd, nil)
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no report: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, lines) }()
	var rep serveReport
	if err := json.Unmarshal([]byte(first), &rep); err != nil || rep.HTTP == "" {
		t.Fatalf("the report %q: %v", first, err)
	}
	api := rep.HTTP

	call := func(method, path, token string, body string, hdr ...string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, api+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, body := call("GET", "/v1/sessions", "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %s, want 401", code, body)
	}
	start := `{"agent":"notes","prompt":"Note that T-7 is fixed."}`
	if code, body := call("POST", "/v1/runs", viewer, start); code != http.StatusForbidden {
		t.Errorf("a viewer's start: %d %s, want 403", code, body)
	}
	var refs []string
	var ref struct {
		SessionID string `json:"session_id"`
		RunID     string `json:"run_id"`
	}
	for range 2 {
		code, body := call("POST", "/v1/runs", operator, start, "Idempotency-Key", "e2e-key-1")
		if code != http.StatusAccepted || json.Unmarshal(body, &ref) != nil {
			t.Fatalf("start: %d %s", code, body)
		}
		refs = append(refs, ref.SessionID+"/"+ref.RunID)
	}
	if refs[0] != refs[1] {
		t.Fatalf("two starts with one key: %v", refs)
	}

	// The stream, from the start, until approval.requested; then cut.
	var got []events.Event
	lastID := ""
	follow := func(until events.Type) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", api+"/v1/sessions/"+ref.SessionID+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+viewer)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close() // the cut
		err = readSSE(resp.Body, func(e sseEvent) (bool, error) {
			ev, err := events.ParseEvent(e.data)
			if err != nil {
				return false, nil
			}
			if e.id != strconv.FormatUint(ev.Position, 10) {
				t.Errorf("id: %s for the event at position %d", e.id, ev.Position)
			}
			got, lastID = append(got, ev), e.id
			return ev.Type == until, nil
		})
		if err != nil {
			t.Fatalf("the stream ended before %s: %v (%d events)", until, err, len(got))
		}
	}
	follow(events.TypeApprovalRequested)
	if code, body := call("POST", "/v1/sessions/"+ref.SessionID+"/pending/call_write/approve", approver, `{}`); code/100 != 2 {
		t.Fatalf("approve: %d %s", code, body)
	}
	follow(events.TypeRunCompleted)
	for i, ev := range got {
		if ev.Version != uint64(i+1) {
			t.Fatalf("event %d has version %d: missed or repeated across the cut (%d events)", i, ev.Version, len(got))
		}
	}
	for _, ev := range got {
		if ev.Type == events.TypeRunStarted && ev.RunID != ref.RunID {
			t.Errorf("a second run %s for one Idempotency-Key", ev.RunID)
		}
		if ev.Type != events.TypeApprovalDecided {
			continue
		}
		d, err := events.DecodeAs[events.ApprovalDecided](ev)
		if err != nil || !d.Approved || d.By != "alice" || !d.Authenticated {
			t.Errorf("the decision %+v (%v), want approved by alice, authenticated", d, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "work", "notes.txt")); err != nil || string(b) != "T-7 fixed" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
}
