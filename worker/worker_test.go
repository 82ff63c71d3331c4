package worker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
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
	"github.com/weft-run/weft/worker"
)

// The tests start workers as child processes: the test binary re-executed
// with envChild set to the NATS URL. A child prints "READY <id>" once it
// serves, "STARTED <id> <call id>" when a call starts and
// "CANCELLED <id> <call id>" when a call is cancelled. envHang makes its
// slow tool wait until cancelled.
const (
	envChild = "WEFT_WORKER_URL"
	envHang  = "WEFT_WORKER_HANG"
	envID    = "WEFT_WORKER_ID"
	envLimit = "WEFT_WORKER_CONCURRENCY"
	envPool  = "WEFT_WORKER_POOL"
	envNap   = "WEFT_WORKER_NAP" // how long the nap tool sleeps (default 1.5s)
)

func TestMain(m *testing.M) {
	if url := os.Getenv(envChild); url != "" {
		if err := child(url); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type noArgs struct{}

type failArgs struct {
	Kind string `json:"kind"`
}

// childTools are the tools a child worker serves.
func childTools(id string, hang bool, out func(string)) ([]toolsets.Tool, error) {
	nap := 1500 * time.Millisecond
	if v := os.Getenv(envNap); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envNap, err)
		}
		nap = d
	}
	var tools []toolsets.Tool
	add := func(t toolsets.Tool, err error) error {
		if err != nil {
			return err
		}
		tools = append(tools, t)
		return nil
	}
	err := errors.Join(
		add(toolsets.NewContextFunc("whoami", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			time.Sleep(20 * time.Millisecond)
			return id + " " + tc.CallID, nil
		}, toolsets.WithDescription("says which worker ran the call"))),
		add(toolsets.NewContextFunc("slow", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			out("STARTED " + id + " " + tc.CallID)
			if hang {
				<-ctx.Done()
				out("CANCELLED " + id + " " + tc.CallID)
				return "", ctx.Err()
			}
			return id + " " + tc.CallID, nil
		}, toolsets.WithDescription("waits"))),
		add(toolsets.NewContextFunc("nap", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			out("STARTED " + id + " " + tc.CallID)
			time.Sleep(nap)
			out("DONE " + id + " " + tc.CallID)
			return id + " " + tc.CallID, nil
		}, toolsets.WithDescription("naps"))),
		add(toolsets.NewContextFunc("meta", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			v, _ := tc.Metadata("ticket")
			return fmt.Sprint(v), nil
		}, toolsets.WithDescription("shows the run's ticket"))),
		add(toolsets.NewFunc("fail", func(ctx context.Context, a failArgs) (string, error) {
			switch a.Kind {
			case "feedback":
				return "", toolsets.Feedback("try another ticket")
			case "user":
				return "", toolsets.NewUserError("you may not do that", nil)
			default:
				return "", errors.New("disk on fire")
			}
		}, toolsets.WithDescription("fails"), toolsets.WithMaxRetries(1))),
		add(toolsets.NewContextFunc("guarded", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			if tc.Approval == nil {
				return "", toolsets.ApprovalRequired("deploys need a human", nil)
			}
			return "deployed, approved by " + tc.Approval.DecidedBy, nil
		}, toolsets.WithDescription("needs an approval"))),
	)
	if err != nil {
		return nil, err
	}
	// The benchmark's tools: a batch runs in parallel only when no tool
	// name repeats in it, so there are benchTools of each.
	for i := range benchTools {
		if err := errors.Join(
			add(toolsets.NewFunc(fmt.Sprintf("echo_%d", i), func(ctx context.Context, _ noArgs) (string, error) {
				return "ok", nil
			}, toolsets.WithDescription("answers at once"))),
			add(toolsets.NewFunc(fmt.Sprintf("wait10ms_%d", i), func(ctx context.Context, _ noArgs) (string, error) {
				time.Sleep(10 * time.Millisecond)
				return "ok", nil
			}, toolsets.WithDescription("waits 10 ms"))),
		); err != nil {
			return nil, err
		}
	}
	return tools, nil
}

// benchTools is how many tools of each benchmark kind a child serves.
const benchTools = 64

func child(url string) error {
	id := os.Getenv(envID)
	var mu sync.Mutex
	out := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Println(s)
	}
	tools, err := childTools(id, os.Getenv(envHang) != "", out)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	limit, _ := strconv.Atoi(os.Getenv(envLimit))
	opts := []worker.Option{worker.WithID(id), worker.WithConcurrency(limit)}
	if pool := os.Getenv(envPool); pool != "" {
		opts = append(opts, worker.WithPool(pool))
	}
	w, err := worker.New(nc, tools, opts...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Serve(ctx) }()
	// Serving once the worker answers a describe itself.
	for {
		msg, err := nc.Request(protocol.WorkerDescribeSubject(bus.Default), nil, time.Second)
		if err == nil {
			var d protocol.WorkerDescription
			if json.Unmarshal(msg.Data, &d) == nil && d.WorkerID == id {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	out("READY " + id)
	return <-done
}

// proc is a child worker process and the lines it printed.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	// pending are lines read while waiting for another one: a worker may
	// start a call before the test waits for it (even before READY).
	pending []string
}

// startWorker starts a child worker named id connected to url and waits
// until it serves.
func startWorker(t testing.TB, url, id string, hang bool, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envChild+"="+url, envID+"="+id), env...)
	if hang {
		cmd.Env = append(cmd.Env, envHang+"=1")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 100)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	p.expect(t, "READY "+id)
	return p
}

// expect waits for a line starting with prefix and returns it: the first
// such line not returned before, among those printed so far or to come.
func (p *proc) expect(t testing.TB, prefix string) string {
	t.Helper()
	for i, l := range p.pending {
		if strings.HasPrefix(l, prefix) {
			p.pending = slices.Delete(p.pending, i, i+1)
			return l
		}
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("worker exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, "ERROR") {
				t.Fatalf("worker: %s", l)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
			p.pending = append(p.pending, l)
		case <-timeout:
			t.Fatalf("no %q from the worker", prefix)
		}
	}
}

// node starts a NATS server on loopback and a runtime on it.
func node(t testing.TB) (*weft.Runtime, string) {
	t.Helper()
	return nodeWith(t, weft.Config{})
}

// nodeWith is node with cfg's settings (its NATSURL and Store are set).
func nodeWith(t testing.TB, cfg weft.Config) (*weft.Runtime, string) {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	cfg.NATSURL, cfg.Store = srv.ClientURL(), memstore.New()
	rt, err := weft.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt, srv.ClientURL()
}

// callModel calls the tools of the prompt (a JSON list of calls) in one
// response, then answers "done".
func callModel() llm.Model {
	return llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 {
			return &llm.Response{Text: "done"}, nil
		}
		var calls []llm.ToolCall
		var text string
		for _, p := range last.Parts {
			if u, ok := p.(llm.UserPrompt); ok {
				text = u.Text
			}
		}
		if err := json.Unmarshal([]byte(text), &calls); err != nil {
			return nil, err
		}
		return &llm.Response{ToolCalls: calls}, nil
	})
}

func prompt(t testing.TB, calls ...llm.ToolCall) string {
	t.Helper()
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// agent registers an agent with the remote tools named.
func agent(t testing.TB, rt *weft.Runtime, names ...string) *weft.Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ts, err := rt.RemoteTools(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: callModel(), Toolsets: []toolsets.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// returns gives the run's tool.returned returns by call id (the last of
// each call).
func returns(t testing.TB, s *weft.Session, runID string) map[string]toolsets.Return {
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
		out[r.CallID] = r // an approved call returns twice: keep the last
	}
	return out
}

// countReturned counts the run's tool.returned events.
func countReturned(t testing.TB, s *weft.Session, runID string) int {
	t.Helper()
	evs, err := s.Events(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == events.TypeToolReturned {
			n++
		}
	}
	return n
}

func content(r toolsets.Return) string {
	var s string
	_ = json.Unmarshal(r.Content, &s)
	return s
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func TestRemoteReturnsAndErrors(t *testing.T) {
	rt, url := node(t)
	startWorker(t, url, "w1", false)
	a := agent(t, rt, "whoami", "fail", "meta")
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t,
		call("c1", "whoami", `{}`),
		call("c6", "meta", `{}`),
		call("c2", "fail", `{"kind":"feedback"}`),
		call("c3", "fail", `{"kind":"user"}`),
		call("c4", "fail", `{"kind":"exec"}`),
		call("c5", "fail", `{"kind":7}`),
	), weft.WithMetadata(map[string]any{"ticket": "T-7"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted {
		t.Fatalf("status %s, want completed", res.Status)
	}
	type summary struct {
		Kind     toolsets.Kind
		Content  string
		Attempts int
	}
	got := map[string]summary{}
	for id, r := range returns(t, s, res.RunID) {
		c := content(r)
		if r.Kind != toolsets.KindSuccess {
			c = "" // error messages are the registry's wording
		}
		got[id] = summary{Kind: r.Kind, Content: c, Attempts: r.Attempts}
	}
	want := map[string]summary{
		"c1": {Kind: toolsets.KindSuccess, Content: "w1 c1", Attempts: 1},
		"c2": {Kind: toolsets.KindFeedback, Attempts: 1},
		"c3": {Kind: toolsets.KindUserError, Attempts: 1},
		"c4": {Kind: toolsets.KindExecution, Attempts: 2},
		"c5": {Kind: toolsets.KindInvalidArguments, Attempts: 0},
		"c6": {Kind: toolsets.KindSuccess, Content: "T-7", Attempts: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("returns (-want +got):\n%s", d)
	}
	evs, err := s.Events(t.Context(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for _, ev := range evs {
		if ev.Type == events.TypeToolRetried && ev.ToolCallID == "c4" {
			retried++
		}
	}
	if retried != 1 {
		t.Errorf("tool.retried of c4: %d, want 1", retried)
	}
}

func TestRemoteApproval(t *testing.T) {
	rt, url := node(t)
	startWorker(t, url, "w1", false)
	a := agent(t, rt, "guarded")
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, call("c1", "guarded", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("status %s, pending %+v; want waiting for one approval", res.Status, res.Pending)
	}
	res, err = s.Resume(t.Context(), weft.Approve("c1", "alice", nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted {
		t.Fatalf("status %s, want completed", res.Status)
	}
	if got, want := content(returns(t, s, res.RunID)["c1"]), "deployed, approved by alice"; got != want {
		t.Errorf("return %q, want %q", got, want)
	}
}

func TestRemoteWorkersShareLoad(t *testing.T) {
	rt, url := node(t)
	startWorker(t, url, "w1", false)
	startWorker(t, url, "w2", false)
	a := agent(t, rt, "whoami")
	s := a.NewSession()
	var calls []llm.ToolCall
	for i := range 24 {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "whoami", `{}`))
	}
	res, err := s.Run(t.Context(), prompt(t, calls...))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	rets := returns(t, s, res.RunID)
	for id, r := range rets {
		w, callID, _ := strings.Cut(content(r), " ")
		if callID != id {
			t.Errorf("call %s answered as %q", id, content(r))
		}
		by[w]++
	}
	if len(rets) != len(calls) || by["w1"] == 0 || by["w2"] == 0 {
		t.Errorf("calls by worker %v (of %d returns); want both workers used for all %d calls", by, len(rets), len(calls))
	}
}

// TestRemoteWorkerKilledMidCall SIGKILLs a worker process while it runs a
// call, from the queue group and from a pool: the node sends the call
// again under the same call id, and another worker returns it.
func TestRemoteWorkerKilledMidCall(t *testing.T) {
	for _, mode := range dispatchModes {
		t.Run(mode.name, func(t *testing.T) { testWorkerKilledMidCall(t, mode.env) })
	}
}

func testWorkerKilledMidCall(t *testing.T, env []string) {
	rt, url := node(t)
	hung := startWorker(t, url, "hung", true, env...)
	a := agent(t, rt, "slow")
	s := a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.Run(t.Context(), prompt(t, call("c1", "slow", `{}`)))
		done <- outcome{res, err}
	}()
	if got := hung.expect(t, "STARTED"); got != "STARTED hung c1" {
		t.Fatalf("first worker printed %q", got)
	}
	spare := startWorker(t, url, "spare", false, env...)
	if err := hung.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := spare.expect(t, "STARTED"); got != "STARTED spare c1" {
		t.Fatalf("second worker printed %q", got)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	wantOneReturn(t, s, o.res.RunID, "c1", "spare c1")
}

func TestRemoteCancel(t *testing.T) {
	rt, url := node(t)
	w := startWorker(t, url, "w1", true)
	a := agent(t, rt, "slow")
	s := a.NewSession()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Run(ctx, prompt(t, call("c1", "slow", `{}`)))
	}()
	w.expect(t, "STARTED w1 c1")
	cancel()
	if got := w.expect(t, "CANCELLED"); got != "CANCELLED w1 c1" {
		t.Errorf("worker printed %q", got)
	}
	<-done
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Runs {
		if r.Status != weft.StatusCancelled {
			t.Errorf("run %s is %s, want cancelled", r.ID, r.Status)
		}
	}
	if len(st.Runs) != 1 {
		t.Errorf("%d runs, want 1", len(st.Runs))
	}
}

// TestRemoteDuplicateResult serves a tool with a worker written against
// the raw protocol that answers every call twice (and heartbeats): the
// first return counts, the second is ignored.
func TestRemoteDuplicateResult(t *testing.T) {
	rt, url := node(t)
	nc, subject := rawWorker(t, url, "raw", toolsets.Definition{Name: "twice", Description: "answers twice", Parameters: json.RawMessage(`{"type":"object"}`)})
	headers := make(chan nats.Header, 1)
	if _, err := nc.QueueSubscribe(subject, protocol.WorkerQueueGroup, func(m *nats.Msg) {
		var req protocol.ToolRequest
		if err := json.Unmarshal(m.Data, &req); err != nil {
			return
		}
		headers <- m.Header
		for _, r := range []string{
			`{"type":"heartbeat","call_id":%q,"tool":"twice"}`,
			`{"type":"returned","call_id":%q,"tool":"twice","attempt":1,"return":{"call_id":"c1","tool_name":"twice","kind":"success","success":true,"content":"first","attempts":1,"max_attempts":1}}`,
			`{"type":"returned","call_id":%q,"tool":"twice","attempt":1,"return":{"call_id":"c1","tool_name":"twice","kind":"success","success":true,"content":"second","attempts":1,"max_attempts":1}}`,
		} {
			_ = nc.Publish(m.Reply, []byte(fmt.Sprintf(r, req.CallID)))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	a := agent(t, rt, "twice")
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, call("c1", "twice", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	if n := countReturned(t, s, res.RunID); n != 1 {
		t.Errorf("%d tool.returned, want 1", n)
	}
	if got := content(returns(t, s, res.RunID)["c1"]); got != "first" {
		t.Errorf("return %q, want the first", got)
	}
	h := <-headers
	got := map[string]string{"call": h.Get(protocol.HeaderCallID), "delivery": h.Get(protocol.HeaderDelivery)}
	if d := cmp.Diff(map[string]string{"call": "c1", "delivery": "1"}, got); d != "" {
		t.Errorf("headers (-want +got):\n%s", d)
	}
}

// TestRemoteWorkerStopsMidCall stops a worker (in this process) while its
// call hangs: past the drain time the call is abandoned without a return,
// and the node sends it to the next worker.
func TestRemoteWorkerStopsMidCall(t *testing.T) {
	rt, url := node(t)
	started := make(chan string, 4)
	serve := func(id string, hang bool, opts ...worker.Option) (stop func() error) {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		tools, err := childTools(id, hang, func(line string) { started <- line })
		if err != nil {
			t.Fatal(err)
		}
		w, err := worker.New(nc, tools, append(opts, worker.WithID(id))...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Serve(ctx) }()
		t.Cleanup(cancel)
		return func() error {
			cancel()
			return <-done
		}
	}
	stopHung := serve("hung", true, worker.WithDrain(50*time.Millisecond))
	a := agent(t, rt, "slow")
	s := a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.Run(t.Context(), prompt(t, call("c1", "slow", `{}`)))
		done <- outcome{res, err}
	}()
	if got := <-started; got != "STARTED hung c1" {
		t.Fatalf("first worker: %q", got)
	}
	if err := stopHung(); err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != "CANCELLED hung c1" {
		t.Fatalf("first worker: %q", got)
	}
	serve("spare", false)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	wantOneReturn(t, s, o.res.RunID, "c1", "spare c1")
}

func TestNewErrors(t *testing.T) {
	tool, err := toolsets.NewFunc("echo", func(ctx context.Context, a noArgs) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	nc := &nats.Conn{}
	for _, tc := range []struct {
		name  string
		nc    *nats.Conn
		tools []toolsets.Tool
		want  error
	}{
		{"no connection", nil, []toolsets.Tool{tool}, worker.ErrNoTools},
		{"no tools", nc, nil, worker.ErrNoTools},
		{"nil tool", nc, []toolsets.Tool{nil}, worker.ErrNoTools},
		{"duplicate tool", nc, []toolsets.Tool{tool, tool}, toolsets.ErrDuplicateTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := worker.New(tc.nc, tc.tools); !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestConcurrencyLimit runs four parallel calls on a worker limited to
// one call at a time: they all return, never two at once.
func TestConcurrencyLimit(t *testing.T) {
	rt, url := node(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	running, most := 0, 0
	var tools []toolsets.Tool
	var names []string
	var calls []llm.ToolCall
	for i := range 4 {
		name := fmt.Sprintf("probe_%d", i)
		tool, err := toolsets.NewFunc(name, func(ctx context.Context, _ noArgs) (string, error) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return "ok", nil
		}, toolsets.WithDescription("probes concurrency"))
		if err != nil {
			t.Fatal(err)
		}
		tools, names = append(tools, tool), append(names, name)
		calls = append(calls, call(fmt.Sprintf("c%d", i), name, `{}`))
	}
	w, err := worker.New(nc, tools, worker.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	a := agent(t, rt, names...)
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, calls...))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for id, r := range returns(t, s, res.RunID) {
		got[id] = content(r)
	}
	if d := cmp.Diff(map[string]string{"c0": "ok", "c1": "ok", "c2": "ok", "c3": "ok"}, got); d != "" {
		t.Errorf("returns (-want +got):\n%s", d)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if most != 1 {
		t.Errorf("%d calls ran at once, want 1", most)
	}
}

// TestRemoteNoWorker describes a tool nobody serves: the node delivers the
// call MaxDeliveries times, a heartbeat deadline apart, then fails it.
func TestRemoteNoWorker(t *testing.T) {
	rt, url := node(t)
	nc, subject := rawWorker(t, url, "ghost", toolsets.Definition{Name: "ghost", Description: "never answers", Parameters: json.RawMessage(`{"type":"object"}`)})
	var mu sync.Mutex
	var deliveries []string
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		deliveries = append(deliveries, m.Header.Get(protocol.HeaderCallID)+"#"+m.Header.Get(protocol.HeaderDelivery))
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	a := agent(t, rt, "ghost")
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, call("c1", "ghost", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	r := returns(t, s, res.RunID)["c1"]
	if r.Kind != toolsets.KindExecution || !strings.Contains(content(r), "no worker reported") {
		t.Errorf("return %s %q, want an execution error saying no worker reported", r.Kind, content(r))
	}
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for i := 1; i <= protocol.MaxDeliveries; i++ {
		want = append(want, "c1#"+strconv.Itoa(i))
	}
	if d := cmp.Diff(want, deliveries); d != "" {
		t.Errorf("deliveries (-want +got):\n%s", d)
	}
}

// TestRemoteWorkerCutOff stops a worker process (SIGSTOP) mid-call past the
// heartbeat deadline: the call completes on another worker with the same
// call id, and the stopped worker's late return, once it continues, is
// ignored.
func TestRemoteWorkerCutOff(t *testing.T) {
	rt, url := node(t)
	// The stopped worker's nap is long enough that the test stops it
	// before the nap ends even when it reads STARTED late under load.
	cut := startWorker(t, url, "cut", false, envNap+"=4s")
	a := agent(t, rt, "nap", "whoami")
	s := a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.Run(t.Context(), prompt(t, call("c1", "nap", `{}`)))
		done <- outcome{res, err}
	}()
	cut.expect(t, "STARTED cut c1")
	if err := cut.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	spare := startWorker(t, url, "spare", false)
	spare.expect(t, "STARTED spare c1")
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if err := cut.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	cut.expect(t, "DONE cut c1")
	// Another run on the session: the late return has crossed NATS by the
	// time it is done.
	if _, err := s.Run(t.Context(), prompt(t, call("c2", "whoami", `{}`))); err != nil {
		t.Fatal(err)
	}
	wantOneReturn(t, s, o.res.RunID, "c1", "spare c1")
}

// TestRedeliveryWhileRunning sends a call twice, from two reply subjects
// (a node that restarted), while the worker runs it: it runs once and
// reports its return on the latest reply subject.
func TestRedeliveryWhileRunning(t *testing.T) {
	_, url := node(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	gate := make(chan struct{})
	runs := make(chan string, 4)
	tool, err := toolsets.NewContextFunc("gated", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		runs <- tc.CallID
		<-gate
		return "ok", nil
	}, toolsets.WithDescription("waits for the test"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(nc, []toolsets.Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(func() {
		cancel()
		<-served
	})
	t.Cleanup(release)
	subject, _ := protocol.WorkerCallSubject(bus.Default, "gated")
	body, _ := json.Marshal(protocol.ToolRequest{SessionID: "s", RunID: "r", CallID: "c1", Name: "gated", Arguments: json.RawMessage(`{}`)})
	listen := func() chan *nats.Msg {
		ch := make(chan *nats.Msg, 64)
		inbox := nc.NewInbox()
		sub, err := nc.ChanSubscribe(inbox, ch)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		// Until the worker subscribed, the request finds no responder.
		for {
			if err := nc.PublishRequest(subject, inbox, body); err != nil {
				t.Fatal(err)
			}
			select {
			case m := <-ch:
				if len(m.Data) > 0 {
					return ch
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no report on a fresh reply subject")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	first := listen()
	if got := <-runs; got != "c1" {
		t.Fatalf("ran %q", got)
	}
	second := listen()
	release()
	timeout := time.After(10 * time.Second)
	for {
		var m *nats.Msg
		select {
		case m = <-second:
		case <-timeout:
			t.Fatal("no return on the second reply subject")
		}
		var r protocol.ToolReport
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type == protocol.ReportReturned {
			if r.CallID != "c1" || r.Return.Kind != toolsets.KindSuccess {
				t.Errorf("return %+v", r)
			}
			break
		}
	}
	select {
	case id := <-runs:
		t.Errorf("call %s ran twice", id)
	default:
	}
	for {
		select {
		case m := <-first:
			var r protocol.ToolReport
			if json.Unmarshal(m.Data, &r) == nil && r.Type == protocol.ReportReturned {
				t.Errorf("the return went to the first reply subject")
			}
			continue
		default:
		}
		break
	}
}

// TestSameCallIDAcrossSessions runs two sessions that call one tool with
// the same call id at once on one worker: call ids are unique only within a
// run, so both calls run, each with its own result; cancelling one session's
// run cancels its call only.
func TestSameCallIDAcrossSessions(t *testing.T) {
	rt, url := node(t)
	type started struct {
		session string
		ctx     context.Context
	}
	starts := make(chan started, 4)
	cancelled := make(chan string, 4)
	release := make(chan struct{})
	tool, err := toolsets.NewContextFunc("hold", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		starts <- started{tc.SessionID, ctx}
		select {
		case <-ctx.Done():
			cancelled <- tc.SessionID
			return "", ctx.Err()
		case <-release:
			return "done " + tc.SessionID + " " + tc.CallID, nil
		}
	}, toolsets.WithDescription("waits for the test or a cancel"))
	if err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, url, []toolsets.Tool{tool})
	a := agent(t, rt, "hold")
	cancelledSession, kept := a.NewSession(), a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	runCtx, cancelRun := context.WithCancel(t.Context())
	defer cancelRun()
	cancelledDone, keptDone := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		res, err := cancelledSession.Run(runCtx, prompt(t, call("c1", "hold", `{}`)))
		cancelledDone <- outcome{res, err}
	}()
	go func() {
		res, err := kept.Run(t.Context(), prompt(t, call("c1", "hold", `{}`)))
		keptDone <- outcome{res, err}
	}()
	// Both calls run on the worker at once: neither is taken for a
	// re-delivery of the other.
	running := map[string]context.Context{}
	for len(running) < 2 {
		select {
		case s := <-starts:
			running[s.session] = s.ctx
		case <-time.After(20 * time.Second):
			t.Fatalf("calls started in sessions %v, want both", slices.Collect(maps.Keys(running)))
		}
	}
	cancelRun()
	select {
	case got := <-cancelled:
		if got != cancelledSession.ID() {
			t.Fatalf("the call of session %s was cancelled, want %s", got, cancelledSession.ID())
		}
	case <-time.After(20 * time.Second):
		close(release)
		<-keptDone
		t.Fatal("the cancelled session's remote call was not cancelled within 20s")
	}
	if o := <-cancelledDone; o.err != nil && !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancelled run: %v", o.err)
	}
	if err := running[kept.ID()].Err(); err != nil {
		t.Fatalf("the other session's call was cancelled too: %v", err)
	}
	select {
	case o := <-keptDone:
		t.Fatalf("the other session's run ended before its call returned: %+v", o)
	default:
	}
	close(release)
	o := <-keptDone
	if o.err != nil {
		t.Fatal(o.err)
	}
	if got, want := content(returns(t, kept, o.res.RunID)["c1"]), "done "+kept.ID()+" c1"; got != want {
		t.Errorf("return %q, want %q", got, want)
	}
	st, err := cancelledSession.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Runs {
		if r.Status != weft.StatusCancelled {
			t.Errorf("run %s of the cancelled session is %s, want cancelled", r.ID, r.Status)
		}
	}
	select {
	case s := <-cancelled:
		t.Errorf("session %s's call was cancelled as well", s)
	default:
	}
}

// wantOneReturn checks that the run recorded exactly one tool.returned and
// that the return of call has content want.
func wantOneReturn(t *testing.T, s *weft.Session, runID, call, want string) {
	t.Helper()
	if n := countReturned(t, s, runID); n != 1 {
		t.Errorf("%d tool.returned, want 1", n)
	}
	if got := content(returns(t, s, runID)[call]); got != want {
		t.Errorf("return of %s = %q, want %q", call, got, want)
	}
}

// rawWorker connects to url as a worker written against the raw protocol
// that describes the one tool def, and returns its connection and the
// tool's call subject for the test to serve by hand.
func rawWorker(t *testing.T, url, workerID string, def toolsets.Definition) (*nats.Conn, string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	desc, err := json.Marshal(protocol.WorkerDescription{WorkerID: workerID, Tools: []toolsets.Definition{def}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe(protocol.WorkerDescribeSubject(bus.Default), func(m *nats.Msg) { _ = m.Respond(desc) }); err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.WorkerCallSubject(bus.Default, def.Name)
	if err != nil {
		t.Fatal(err)
	}
	return nc, subject
}

// TestCancelBeforeCall sends a call's cancel before the call itself: a
// worker that takes up the call after its cancel (calls and cancels arrive
// on different subscriptions) returns it cancelled without running it,
// while a call under other ids runs.
func TestCancelBeforeCall(t *testing.T) {
	_, url := node(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ran := make(chan string, 4)
	tool, err := toolsets.NewContextFunc("mark", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		ran <- tc.RunID
		return "ran " + tc.RunID, nil
	}, toolsets.WithDescription("records that it ran"))
	if err != nil {
		t.Fatal(err)
	}
	w := serveInProcess(t, url, []toolsets.Tool{tool})
	if _, err := weft.DescribeRemoteTools(t.Context(), nc, bus.Default, "mark"); err != nil {
		t.Fatal(err)
	}
	client, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	callSubject, err := protocol.WorkerCallSubject(bus.Default, "mark")
	if err != nil {
		t.Fatal(err)
	}
	// finalReturn sends a call of run and returns its return.
	finalReturn := func(run string) *toolsets.Return {
		t.Helper()
		inbox := client.NewInbox()
		sub, err := client.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
		req, err := json.Marshal(protocol.ToolRequest{SessionID: "s1", RunID: run, CallID: "c1", Name: "mark", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := client.PublishRequest(callSubject, inbox, req); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := sub.NextMsg(20 * time.Second)
			if err != nil {
				t.Fatalf("run %s: no return: %v", run, err)
			}
			var r protocol.ToolReport
			if err := json.Unmarshal(m.Data, &r); err != nil {
				t.Fatalf("run %s: bad report %q: %v", run, m.Data, err)
			}
			if r.Type == protocol.ReportReturned {
				return r.Return
			}
		}
	}
	cancelSubject, err := protocol.WorkerCancelSubject(bus.Default, "s1", "r1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Publish(cancelSubject, nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Flush(); err != nil {
		t.Fatal(err)
	}
	// The worker has taken the cancel when it remembers it.
	for deadline := time.Now().Add(20 * time.Second); w.EarlyCancels() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not take the cancel")
		}
	}
	// The call's request follows its cancel: it comes back cancelled.
	if ret := finalReturn("r1"); ret == nil || ret.Kind != toolsets.KindCancelled {
		t.Fatalf("return after an early cancel = %+v, want kind cancelled", ret)
	}
	// The same call id under another run is not cancelled.
	if ret := finalReturn("r2"); ret == nil || ret.Kind != toolsets.KindSuccess {
		t.Fatalf("return of another run = %+v, want success", ret)
	}
	if n := w.EarlyCancels(); n != 0 {
		t.Errorf("%d early cancels remembered after their call came, want 0", n)
	}
	if got := <-ran; got != "r2" {
		t.Errorf("the tool ran for run %s, want r2 only", got)
	}
	select {
	case got := <-ran:
		t.Errorf("the tool ran again, for run %s", got)
	default:
	}
}
