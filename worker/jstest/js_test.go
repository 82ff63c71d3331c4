package jstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// envRequire set to "require" turns a missing node or nats package into a
// failure instead of a skip.
const envRequire = "WEFT_JS_WORKER"

// workerDir holds worker.mjs and its node_modules.
var workerDir = filepath.Join("..", "js")

// wait bounds every wait of the tests on the worker.
const wait = 20 * time.Second

// nodeBinary returns the node executable, or skips (fails with
// WEFT_JS_WORKER=require) when node or the nats package is missing.
func nodeBinary(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := what + ": install Node.js 20+ and run `npm install --no-save --no-package-lock` in worker/js"
		if os.Getenv(envRequire) == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on PATH")
	}
	if _, err := os.Stat(filepath.Join(workerDir, "node_modules", "nats", "package.json")); err != nil {
		missing("the npm package nats is not installed in worker/js")
	}
	return node
}

// jsWorker is a running `node worker.mjs`; lines are its stdout lines.
type jsWorker struct {
	lines <-chan string
}

// startJSWorker starts the JavaScript worker on url with id and waits
// until it serves. It is killed at cleanup.
func startJSWorker(t *testing.T, url, id string) *jsWorker {
	t.Helper()
	cmd := exec.Command(nodeBinary(t), "worker.mjs", url, id)
	cmd.Dir = workerDir
	cmd.Stderr = &testWriter{t: t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node worker.mjs: %v", err)
	}
	lines := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range lines { // drain until the pipe closes
		}
		<-done
		_ = cmd.Wait()
	})
	w := &jsWorker{lines: lines}
	if got := w.expect(t, "READY"); got != "READY "+id {
		t.Fatalf("worker printed %q, want READY %s", got, id)
	}
	return w
}

// expect returns the worker's next line starting with prefix, skipping
// others, or fails after wait.
func (w *jsWorker) expect(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("the worker exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("no %q from the worker within %v", prefix, wait)
		}
	}
}

// testWriter logs the worker's stderr.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("worker stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = (*testWriter)(nil)

// node starts a NATS server on loopback and a runtime on it.
func node(t *testing.T) (*weft.Runtime, string) {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	rt, err := weft.Start(t.Context(), weft.Config{NATSURL: srv.ClientURL(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt, srv.ClientURL()
}

// callModel makes the tool calls of the prompt (a JSON list of calls) in
// one response, then answers "done".
func callModel() llm.Model {
	return llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 {
			return &llm.Response{Text: "done"}, nil
		}
		var text string
		for _, p := range last.Parts {
			if u, ok := p.(llm.UserPrompt); ok {
				text = u.Text
			}
		}
		var calls []llm.ToolCall
		if err := json.Unmarshal([]byte(text), &calls); err != nil {
			return nil, err
		}
		return &llm.Response{ToolCalls: calls}, nil
	})
}

func prompt(t *testing.T, calls ...llm.ToolCall) string {
	t.Helper()
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// agent registers an agent whose tools are the JavaScript worker's.
func agent(t *testing.T, rt *weft.Runtime) *weft.Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	ts, err := rt.RemoteTools(ctx, "js_add", "js_feedback", "js_slow")
	if err != nil {
		t.Fatal(err)
	}
	a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: callModel(), Toolsets: []toolsets.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// returns gives the run's recorded tool returns by call id.
func returns(t *testing.T, s *weft.Session, runID string) map[string]toolsets.Return {
	t.Helper()
	evs, err := s.Events(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]toolsets.Return{}
	for _, ev := range evs {
		if ev.Type != events.TypeToolReturned {
			continue
		}
		var d events.ToolReturned
		var r toolsets.Return
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(d.Return, &r); err != nil {
			t.Fatal(err)
		}
		out[r.CallID] = r
	}
	return out
}

func TestJSWorkerDescribes(t *testing.T) {
	rt, url := node(t)
	startJSWorker(t, url, "js-1")
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	defs, err := weft.DescribeRemoteTools(ctx, rt.Conn(), rt.Subjects(), "js_add", "js_slow")
	if err != nil {
		t.Fatal(err)
	}
	type def struct {
		Name     string
		Required []string
	}
	var got []def
	for _, d := range defs {
		var schema struct {
			Required []string `json:"required"`
		}
		b, err := json.Marshal(d.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		got = append(got, def{Name: d.Name, Required: schema.Required})
	}
	want := []def{{"js_add", []string{"a", "b"}}, {"js_slow", []string{"ms"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("definitions (-want +got):\n%s", d)
	}
}

func TestJSWorkerReturnsAndErrors(t *testing.T) {
	rt, url := node(t)
	startJSWorker(t, url, "js-1")
	s := agent(t, rt).NewSession()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	res, err := s.Run(ctx, prompt(t,
		call("add", "js_add", `{"a":2,"b":40}`),
		call("feedback", "js_feedback", `{"topic":"cheese"}`),
		call("bad", "js_add", `{"a":"two","b":40}`),
		call("slow", "js_slow", `{"ms":20}`),
	))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted {
		t.Fatalf("status %s, want completed", res.Status)
	}
	type summary struct {
		Kind     toolsets.Kind
		Success  bool
		IsError  bool
		Content  string
		Attempts int
	}
	got := map[string]summary{}
	for id, r := range returns(t, s, res.RunID) {
		got[id] = summary{Kind: r.Kind, Success: r.Success, IsError: r.IsError, Content: string(r.Content), Attempts: r.Attempts}
	}
	want := map[string]summary{
		"add":      {Kind: toolsets.KindSuccess, Success: true, Content: `42`, Attempts: 1},
		"feedback": {Kind: toolsets.KindFeedback, Content: `"unknown topic \"cheese\": ask about \"weft\""`, Attempts: 1},
		"bad":      {Kind: toolsets.KindInvalidArguments, IsError: true, Content: `"a must be a number"`},
		"slow":     {Kind: toolsets.KindSuccess, Success: true, Content: `"slept 20"`, Attempts: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("returns (-want +got):\n%s", d)
	}
}

func TestJSWorkerCancel(t *testing.T) {
	rt, url := node(t)
	w := startJSWorker(t, url, "js-1")
	s := agent(t, rt).NewSession()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		// js_slow waits a minute unless the cancel reaches the worker.
		_, err := s.Run(ctx, prompt(t, call("c1", "js_slow", `{"ms":60000}`)))
		done <- err
	}()
	if got := w.expect(t, "STARTED"); got != "STARTED js-1 c1" {
		t.Fatalf("worker printed %q, want STARTED js-1 c1", got)
	}
	cancel()
	if got := w.expect(t, "CANCELLED"); got != "CANCELLED js-1 c1" {
		t.Errorf("worker printed %q, want CANCELLED js-1 c1", got)
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the run did not end after its cancel")
	}
	st, err := s.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 {
		t.Errorf("%d runs, want 1", len(st.Runs))
	}
	for id, r := range st.Runs {
		if r.Status != weft.StatusCancelled {
			t.Errorf("run %s is %s, want cancelled", id, r.Status)
		}
	}
}
