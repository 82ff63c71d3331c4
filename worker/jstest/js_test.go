package jstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/protocol"
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
	cmd   *exec.Cmd
	lines <-chan string
}

// startJSWorker starts the JavaScript worker on url with id and waits
// until it serves. It is killed at cleanup.
func startJSWorker(t *testing.T, url, id string) *jsWorker {
	t.Helper()
	return startJSWorkerArgs(t, url, id)
}

// startPooledJSWorker starts the JavaScript worker on url with id in pool,
// running at most concurrency calls at once (0: the worker's default), and
// waits until it serves. It is killed at cleanup.
func startPooledJSWorker(t *testing.T, url, id, pool string, concurrency int) *jsWorker {
	t.Helper()
	args := []string{pool}
	if concurrency > 0 {
		args = append(args, strconv.Itoa(concurrency))
	}
	return startJSWorkerArgs(t, url, id, args...)
}

// startJSWorkerArgs starts `node worker.mjs url id args...` and waits until
// it serves. It is killed at cleanup.
func startJSWorkerArgs(t *testing.T, url, id string, args ...string) *jsWorker {
	t.Helper()
	cmd := exec.Command(nodeBinary(t), append([]string{"worker.mjs", url, id}, args...)...)
	cmd.Dir = workerDir
	cmd.Env = workerEnv(t, url)
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
	w := &jsWorker{cmd: cmd, lines: lines}
	if got := w.expect(t, "READY"); got != "READY "+id {
		t.Fatalf("worker printed %q, want READY %s", got, id)
	}
	return w
}

// expect returns the worker's next line starting with prefix, skipping
// others, or fails after wait.
func (w *jsWorker) expect(t *testing.T, prefix string) string {
	t.Helper()
	l, err := w.next(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// next is expect returning its error.
func (w *jsWorker) next(prefix string) (string, error) {
	timeout := time.After(wait)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return "", fmt.Errorf("the worker exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l, nil
			}
		case <-timeout:
			return "", fmt.Errorf("no %q from the worker within %v", prefix, wait)
		}
	}
}

// stop stops the worker gracefully (SIGTERM: it unsubscribes, lets its
// calls end and exits) and returns the lines it printed that expect has
// not consumed, up to its exit; it fails after wait.
func (w *jsWorker) stop(t *testing.T) []string {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stop the worker: %v", err)
	}
	return w.rest(t)
}

// rest returns the lines the worker prints that expect has not consumed,
// up to its exit; it fails after wait.
func (w *jsWorker) rest(t *testing.T) []string {
	t.Helper()
	var rest []string
	timeout := time.After(wait)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return rest
			}
			rest = append(rest, l)
		case <-timeout:
			t.Fatalf("the worker did not exit within %v", wait)
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

// credsDirs maps the URL of each server the tests start to its role
// credentials directory.
var credsDirs sync.Map

// server starts a NATS server on loopback, with weft's role credentials and
// permissions (as weft serve runs it), and returns its URL. The JavaScript
// worker authenticates as the worker role (WEFT_CREDS_DIR), the runtime as
// node.
func server(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	creds, err := bus.LoadOrCreateCredentials(filepath.Join(dir, bus.CredentialsDir))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: filepath.Join(dir, "nats"), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	credsDirs.Store(srv.ClientURL(), creds.Dir())
	return srv.ClientURL()
}

// credsDir returns the credentials directory of the server at url.
func credsDir(t *testing.T, url string) string {
	t.Helper()
	d, ok := credsDirs.Load(url)
	if !ok {
		t.Fatalf("no credentials for %s", url)
	}
	return d.(string)
}

// workerEnv is the environment of a JavaScript worker on url: its
// credentials directory.
func workerEnv(t *testing.T, url string) []string {
	return append(os.Environ(), "WEFT_CREDS_DIR="+credsDir(t, url))
}

// connectAs opens a connection to url as role r, closed at cleanup.
func connectAs(t *testing.T, url string, r bus.Role) *nats.Conn {
	t.Helper()
	nc, err := bus.Connect(t.Context(), []string{url}, bus.WithRoleCredentials(credsDir(t, url), r))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// node starts a NATS server on loopback and a runtime on it.
func node(t *testing.T) (*weft.Runtime, string) {
	t.Helper()
	url := server(t)
	rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NATSNKeySeedFile: bus.SeedFile(credsDir(t, url), bus.RoleNode), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt, url
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

// modes are the two ways a worker takes calls: the core queue group and a
// worker pool.
var modes = []struct {
	name string
	pool string // "": the queue group
}{
	{"queue group", ""},
	{"pool", "jspool"},
}

// startModeJSWorker starts the JavaScript worker id in the queue group
// (pool "") or in pool, with the worker's default concurrency.
func startModeJSWorker(t *testing.T, url, id, pool string) *jsWorker {
	t.Helper()
	if pool == "" {
		return startJSWorker(t, url, id)
	}
	return startPooledJSWorker(t, url, id, pool, 0)
}

// TestJSWorkerReturnsAndErrors runs calls of each kind of return on the
// JavaScript worker, taking calls from the queue group and from a pool (a
// pooled worker subscribes to no call subject: its calls reach it only
// through the pool's queue, which the runtime picks from its description).
func TestJSWorkerReturnsAndErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testReturnsAndErrors(t, m.pool) })
	}
}

func testReturnsAndErrors(t *testing.T, pool string) {
	rt, url := node(t)
	startModeJSWorker(t, url, "js-1", pool)
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
		// Arguments the tool's schema refuses are refused on the node,
		// before the call reaches the worker (the node's message).
		"bad":  {Kind: toolsets.KindInvalidArguments, IsError: true, Content: `"argument \"a\" must be a number, got a string. Pass a number for \"a\"."`},
		"slow": {Kind: toolsets.KindSuccess, Success: true, Content: `"slept 20"`, Attempts: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("returns (-want +got):\n%s", d)
	}
	if pool != "" {
		// Every call was taken out of the pool's queue.
		waitQueue(t, url, 0)
	}
}

// TestJSWorkerCancel cancels a run while its call runs on the JavaScript
// worker, taken from the queue group or from a pool: the worker cancels
// the call and the run ends cancelled.
func TestJSWorkerCancel(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testCancel(t, m.pool) })
	}
}

func testCancel(t *testing.T, pool string) {
	rt, url := node(t)
	w := startModeJSWorker(t, url, "js-1", pool)
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
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 {
		t.Errorf("%d runs, want 1", len(st.Runs))
	}
	for _, r := range st.Runs {
		if r.Status != weft.StatusCancelled {
			t.Errorf("run %s is %s, want cancelled", r.ID, r.Status)
		}
	}
}

// TestJSWorkerSameCallIDAcrossSessions runs two sessions that call js_slow
// with the same call id at once on the JavaScript worker: call ids are
// unique only within a run, so both calls run, each with its own result;
// cancelling one session's run cancels its call only.
func TestJSWorkerSameCallIDAcrossSessions(t *testing.T) {
	rt, url := node(t)
	w := startJSWorker(t, url, "js-1")
	a := agent(t, rt)
	cancelled, kept := a.NewSession(), a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	runCtx, cancelRun := context.WithCancel(t.Context())
	defer cancelRun()
	cancelledDone, keptDone := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		// A minute: it ends only by its cancel.
		res, err := cancelled.Run(runCtx, prompt(t, call("c1", "js_slow", `{"ms":60000}`)))
		cancelledDone <- outcome{res, err}
	}()
	if got := w.expect(t, "STARTED"); got != "STARTED js-1 c1" {
		t.Fatalf("worker printed %q, want STARTED js-1 c1", got)
	}
	// The second session's call starts while the first runs: it is not
	// taken for a re-delivery of the first (a worker keying calls by call
	// id alone would not start it before the first ends, a minute later).
	go func() {
		// Long enough to be still running when the first run's cancel
		// reaches the worker, which the test sends as soon as this call
		// started.
		res, err := kept.Run(t.Context(), prompt(t, call("c1", "js_slow", `{"ms":2000}`)))
		keptDone <- outcome{res, err}
	}()
	if got, err := w.next("STARTED"); err != nil || got != "STARTED js-1 c1" {
		t.Fatalf("the second session's call did not start while the first ran (taken for a re-delivery of it?): got %q, %v; want STARTED js-1 c1", got, err)
	}
	cancelRun()
	if got := w.expect(t, "CANCELLED"); got != "CANCELLED js-1 c1" {
		t.Fatalf("worker printed %q, want CANCELLED js-1 c1", got)
	}
	select {
	case o := <-cancelledDone:
		if o.err != nil && !errors.Is(o.err, context.Canceled) {
			t.Errorf("cancelled run: %v", o.err)
		}
	case <-time.After(wait):
		t.Fatal("the cancelled run did not end within", wait)
	}
	var o outcome
	select {
	case o = <-keptDone:
	case <-time.After(wait):
		t.Fatal("the other session's run did not end within", wait)
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Status != weft.StatusCompleted {
		t.Errorf("the other session's run is %s, want completed", o.res.Status)
	}
	// Its call was not cancelled with the other: it returned its own
	// result.
	r := returns(t, kept, o.res.RunID)["c1"]
	if r.Kind != toolsets.KindSuccess || string(r.Content) != `"slept 2000"` {
		t.Errorf("the other session's return is %s %s, want success \"slept 2000\"", r.Kind, r.Content)
	}
	st, err := cancelled.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 {
		t.Errorf("the cancelled session has %d runs, want 1", len(st.Runs))
	}
	for _, r := range st.Runs {
		if r.Status != weft.StatusCancelled {
			t.Errorf("run %s of the cancelled session is %s, want cancelled", r.ID, r.Status)
		}
	}
	for _, l := range w.stop(t) {
		if strings.HasPrefix(l, "CANCELLED") {
			t.Errorf("the worker cancelled a second call: %q", l)
		}
	}
}

// TestJSWorkerCancelBeforeCall publishes a call's cancel before the call
// itself, against the raw protocol: the JavaScript worker remembers the
// cancel and returns the call cancelled without running it, while the same
// call id under another run runs.
func TestJSWorkerCancelBeforeCall(t *testing.T) {
	url := server(t)
	w := startJSWorker(t, url, "js-1")
	client := connectAs(t, url, bus.RoleNode) // it sends calls and cancels as a node does
	cancelSubject, err := protocol.WorkerCancelSubject(bus.Default, "s1", "r1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Publish(cancelSubject, nil); err != nil {
		t.Fatal(err)
	}
	// The worker has taken the cancel once it answers a describe request
	// sent after it: the server delivers the messages of one publishing
	// connection to a subscribing connection in the order they were
	// published, and nats.js runs the callbacks of a connection's
	// subscriptions one at a time, on the one JavaScript thread, in the
	// order the messages arrive; so the cancel callback (which records the
	// early cancel) has returned before the describe callback publishes
	// its answer.
	inbox := client.NewInbox()
	answers, err := client.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.PublishRequest(protocol.WorkerDescribeSubject(bus.Default), inbox, nil); err != nil {
		t.Fatal(err)
	}
	for described := false; !described; {
		m, err := answers.NextMsg(wait)
		if err != nil {
			t.Fatalf("no describe answer from the worker: %v", err)
		}
		var d protocol.WorkerDescription
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatalf("describe answer %q: %v", m.Data, err)
		}
		described = d.WorkerID == "js-1"
	}
	callSubject, err := protocol.WorkerCallSubject(bus.Default, "js_add")
	if err != nil {
		t.Fatal(err)
	}
	// finalReport sends the call c1 of run in session s1 and returns its
	// returned report.
	finalReport := func(run string) protocol.ToolReport {
		t.Helper()
		inbox := client.NewInbox()
		sub, err := client.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
		req, err := json.Marshal(protocol.ToolRequest{SessionID: "s1", RunID: run, CallID: "c1", Name: "js_add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})
		if err != nil {
			t.Fatal(err)
		}
		msg := &nats.Msg{Subject: callSubject, Reply: inbox, Data: req, Header: nats.Header{}}
		msg.Header.Set(protocol.HeaderCallID, "c1")
		msg.Header.Set(protocol.HeaderDelivery, "1")
		msg.Header.Set(protocol.HeaderHeartbeat, strconv.Itoa(int(protocol.WorkerHeartbeat/time.Millisecond)))
		if err := client.PublishMsg(msg); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := sub.NextMsg(wait)
			if err != nil {
				t.Fatalf("run %s: no returned report: %v", run, err)
			}
			var r protocol.ToolReport
			if err := json.Unmarshal(m.Data, &r); err != nil {
				t.Fatalf("run %s: bad report %q: %v", run, m.Data, err)
			}
			if r.Type == protocol.ReportReturned {
				return r
			}
		}
	}
	type summary struct {
		CallID   string
		Tool     string
		Kind     toolsets.Kind
		Content  string
		Attempts int
	}
	summarize := func(r protocol.ToolReport) summary {
		if r.Return == nil {
			return summary{CallID: r.CallID, Tool: r.Tool}
		}
		return summary{r.CallID, r.Tool, r.Return.Kind, string(r.Return.Content), r.Return.Attempts}
	}
	// The call follows its cancel: it comes back cancelled, never run.
	want := summary{"c1", "js_add", toolsets.KindCancelled, `"cancelled before it started"`, 0}
	if d := cmp.Diff(want, summarize(finalReport("r1"))); d != "" {
		t.Errorf("return after an early cancel (-want +got):\n%s", d)
	}
	// The same call id under another run is another call: it runs.
	want = summary{"c1", "js_add", toolsets.KindSuccess, `3`, 1}
	if d := cmp.Diff(want, summarize(finalReport("r2"))); d != "" {
		t.Errorf("return of the call of another run (-want +got):\n%s", d)
	}
	// The worker prints STARTED before it runs a tool and before it
	// publishes the call's return: every line of both calls is printed by
	// the time it exits.
	var started []string
	for _, l := range w.stop(t) {
		if strings.HasPrefix(l, "STARTED") {
			started = append(started, l)
		}
	}
	if d := cmp.Diff([]string{"STARTED js-1 c1"}, started); d != "" {
		t.Errorf("calls run (-want +got: the cancelled call must not run):\n%s", d)
	}
}

// The JavaScript worker without the worker role's seed is refused by a
// server with weft's role credentials, and says so without printing a seed.
func TestJSWorkerNeedsCredentials(t *testing.T) {
	nodeBin := nodeBinary(t)
	url := server(t)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no credentials", nil, "AUTHORIZATION"},
		{"a missing seed file", []string{"WEFT_NKEY_FILE=" + filepath.Join(t.TempDir(), "none.nk")}, "nkey seed file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			cmd := exec.CommandContext(ctx, nodeBin, "worker.mjs", url, "anon")
			cmd.Dir = workerDir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("worker.mjs: %v (output %q), want a refused start", err, out)
			}
			if !strings.Contains(strings.ToUpper(string(out)), strings.ToUpper(tc.want)) {
				t.Errorf("worker.mjs printed %q, want %q", out, tc.want)
			}
			if strings.Contains(string(out), "READY") {
				t.Errorf("worker.mjs started: %q", out)
			}
		})
	}
}
