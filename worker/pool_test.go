package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// holdTool is a tool that records which worker runs which call and waits
// until the test releases it (or its call is cancelled).
type holdTool struct {
	mu      sync.Mutex
	running map[string]int // worker id → calls running there now
	most    map[string]int // worker id → most calls that ran there at once
	ran     []string       // "<worker> <session> <call>" of every call started
	started chan string    // the session of each call started
	release chan struct{}  // closed: every held call returns
	stopped []string       // "<worker> <session> <call>" of every call cancelled
}

func newHoldTool() *holdTool {
	return &holdTool{running: map[string]int{}, most: map[string]int{}, started: make(chan string, 64), release: make(chan struct{})}
}

// wantOnlyFirst checks that only the first call started ran.
func (h *holdTool) wantOnlyFirst(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ran) != 1 {
		t.Errorf("calls ran %v, want only the first", h.ran)
	}
}

// tool returns the tool as served by worker id.
func (h *holdTool) tool(t *testing.T, id string) toolsets.Tool {
	t.Helper()
	tool, err := toolsets.NewContextFunc("hold", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		h.mu.Lock()
		h.running[id]++
		h.most[id] = max(h.most[id], h.running[id])
		h.ran = append(h.ran, id+" "+tc.SessionID+" "+tc.CallID)
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.running[id]--
			h.mu.Unlock()
		}()
		h.started <- tc.SessionID
		select {
		case <-ctx.Done():
			h.mu.Lock()
			h.stopped = append(h.stopped, id+" "+tc.SessionID+" "+tc.CallID)
			h.mu.Unlock()
			return "", ctx.Err()
		case <-h.release:
			return "held by " + id, nil
		}
	}, toolsets.WithDescription("waits for the test"))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// serveInProcess runs a worker of tools on its own connection to url until
// the test ends.
func serveInProcess(t *testing.T, url string, tools []toolsets.Tool, opts ...worker.Option) *worker.Worker {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w, err := worker.New(nc, tools, append([]worker.Option{worker.WithDrain(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("worker %s: %v", w.ID(), err)
		}
	})
	return w
}

type outcome struct {
	res *weft.Result
	err error
}

// runAll starts one session per element of n, each calling tool once
// with call id c1, and returns the channel their outcomes arrive on.
func runAll(t *testing.T, ctx context.Context, a *weft.Agent, n int, tool string) ([]*weft.Session, chan outcome) {
	t.Helper()
	out := make(chan outcome, n)
	sessions := make([]*weft.Session, n)
	for i := range sessions {
		s := a.NewSession()
		sessions[i] = s
		go func() {
			res, err := s.Run(ctx, prompt(t, call("c1", tool, `{}`)))
			out <- outcome{res, err}
		}()
	}
	return sessions, out
}

// waitStarted waits for n calls to start.
func waitStarted(t *testing.T, h *holdTool, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case s := <-h.started:
			got = append(got, s)
		case <-time.After(20 * time.Second):
			t.Fatalf("%d calls started, want %d", len(got), n)
		}
	}
	return got
}

// TestPoolDispatchIsLoadAware runs four pooled workers that each run one
// call at a time and four sessions calling at once: every call goes to a
// worker with room, so the four run at once, one per worker. (The core
// queue group hands calls out at random: all four land on distinct
// workers in only 4!/4^4 ≈ 9% of runs.) A fifth call waits in the pool's
// queue past the heartbeat deadline without being sent again, and runs
// once a worker has room.
func TestPoolDispatchIsLoadAware(t *testing.T) {
	rt, url := node(t)
	h := newHoldTool()
	for i := range 4 {
		id := fmt.Sprintf("w%d", i)
		serveInProcess(t, url, []toolsets.Tool{h.tool(t, id)}, worker.WithID(id), worker.WithPool("holders"), worker.WithConcurrency(1))
	}
	a := agent(t, rt, "hold")
	_, done := runAll(t, t.Context(), a, 4, "hold")
	waitStarted(t, h, 4)
	h.mu.Lock()
	for id, n := range h.running {
		if n != 1 {
			t.Errorf("worker %s runs %d calls, want 1 (running: %v)", id, n, h.running)
		}
	}
	h.mu.Unlock()

	// The fifth call finds every worker busy: it waits in the queue,
	// longer than the heartbeat deadline, and is not sent again.
	fifth := a.NewSession()
	fifthDone := make(chan outcome, 1)
	go func() {
		res, err := fifth.Run(t.Context(), prompt(t, call("c1", "hold", `{}`)))
		fifthDone <- outcome{res, err}
	}()
	select {
	case s := <-h.started:
		t.Fatalf("a call of session %s started while every worker was busy", s)
	case <-time.After(3 * protocol.MissedHeartbeats * protocol.WorkerHeartbeat):
	}
	close(h.release)
	for range 4 {
		if o := <-done; o.err != nil || o.res.Status != weft.StatusCompleted {
			t.Fatalf("run: %+v %v", o.res, o.err)
		}
	}
	o := <-fifthDone
	if o.err != nil || o.res.Status != weft.StatusCompleted {
		t.Fatalf("the queued run: %+v %v", o.res, o.err)
	}
	wantOneReturn(t, fifth, o.res.RunID, "c1", "held by "+strings.Fields(h.ran[4])[0])
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ran) != 5 {
		t.Errorf("calls ran %d times, want 5: %v", len(h.ran), h.ran)
	}
	for id, n := range h.most {
		if n > 1 {
			t.Errorf("worker %s ran %d calls at once, its limit is 1", id, n)
		}
	}
}

// busyPool serves the hold tool from one worker of pool "single" that
// runs one call at a time, and starts a first call that keeps it busy
// (taken and acknowledged: the pool's queue is empty). It returns the
// tool, the agent and the first run's outcome.
func busyPool(t *testing.T, rt *weft.Runtime, url string) (*holdTool, *weft.Agent, chan outcome) {
	t.Helper()
	h := newHoldTool()
	serveInProcess(t, url, []toolsets.Tool{h.tool(t, "only")}, worker.WithID("only"), worker.WithPool("single"), worker.WithConcurrency(1))
	a := agent(t, rt, "hold")
	_, first := runAll(t, t.Context(), a, 1, "hold")
	waitStarted(t, h, 1)
	wantEmptyQueue(t, url)
	return h, a, first
}

// TestPoolQueueWait gives a pooled call no worker has room for a queue
// wait of 300 ms: the node takes it back out of the queue and fails it,
// and the worker, once free, never runs it.
func TestPoolQueueWait(t *testing.T) {
	rt, url := nodeWith(t, weft.Config{WorkerQueueWait: 300 * time.Millisecond})
	h, a, first := busyPool(t, rt, url)
	waiting := a.NewSession()
	res, err := waiting.Run(t.Context(), prompt(t, call("c1", "hold", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	r := returns(t, waiting, res.RunID)["c1"]
	if r.Kind != toolsets.KindExecution || !strings.Contains(content(r), "no worker of pool single took the call") {
		t.Errorf("return %s %q, want an execution error saying no worker of the pool took the call", r.Kind, content(r))
	}
	close(h.release)
	if o := <-first; o.err != nil || o.res.Status != weft.StatusCompleted {
		t.Fatalf("first run: %+v %v", o.res, o.err)
	}
	wantEmptyQueue(t, url)
	h.wantOnlyFirst(t)
}

// TestPoolCancelQueuedCall cancels a run whose call waits in the queue:
// the node takes the call out of the queue, so the worker never runs it.
func TestPoolCancelQueuedCall(t *testing.T) {
	rt, url := node(t)
	h, a, first := busyPool(t, rt, url)
	ctx, cancel := context.WithCancel(t.Context())
	queued, done := runAll(t, ctx, a, 1, "hold")
	// The call is queued once the stream holds it.
	waitQueue(t, url, 1)
	cancel()
	if o := <-done; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled run: %+v %v", o.res, o.err)
	}
	wantEmptyQueue(t, url)
	close(h.release)
	if o := <-first; o.err != nil {
		t.Fatal(o.err)
	}
	st, err := queued[0].Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Active != "" {
		t.Errorf("the cancelled session still has an active run %s", st.Active)
	}
	h.wantOnlyFirst(t)
}

// TestPoolRemoteBasics runs the plain remote-call cases through a pool:
// returns, tool errors and a worker description naming the pool.
func TestPoolRemoteBasics(t *testing.T) {
	rt, url := node(t)
	startWorker(t, url, "p1", false, envPool+"=basics")
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	msg, err := nc.Request(protocol.WorkerDescribeSubject(bus.Default), nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var d protocol.WorkerDescription
	if err := json.Unmarshal(msg.Data, &d); err != nil || d.Pool != "basics" {
		t.Fatalf("description %s (%v), want pool basics", msg.Data, err)
	}
	a := agent(t, rt, "echo_0", "fail")
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, call("c1", "echo_0", `{}`), call("c2", "fail", `{"kind":"feedback"}`)))
	if err != nil {
		t.Fatal(err)
	}
	got := returns(t, s, res.RunID)
	if r := got["c1"]; r.Kind != toolsets.KindSuccess || content(r) != "ok" {
		t.Errorf("echo: %s %q", r.Kind, content(r))
	}
	if r := got["c2"]; r.Kind != toolsets.KindFeedback || content(r) != "try another ticket" {
		t.Errorf("fail: %s %q, want feedback", r.Kind, content(r))
	}
	wantEmptyQueue(t, url)
}

// TestPoolConfigErrors checks the pool options.
func TestPoolConfigErrors(t *testing.T) {
	_, url := node(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	echo, err := toolsets.NewFunc("echo", func(context.Context, noArgs) (string, error) { return "ok", nil }, toolsets.WithDescription("echo"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []worker.Option
	}{
		{"pool with a dot", []worker.Option{worker.WithPool("a.b")}},
		{"pool with a wildcard", []worker.Option{worker.WithPool("*")}},
		{"long pool", []worker.Option{worker.WithPool(strings.Repeat("p", 65))}},
		{"replicas", []worker.Option{worker.WithPool("p"), worker.WithQueueReplicas(7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := worker.New(nc, []toolsets.Tool{echo}, tc.opts...); !errors.Is(err, protocol.ErrBadPool) {
				t.Errorf("New = %v, want ErrBadPool", err)
			}
		})
	}
}

// queueMsgs returns how many calls wait in the pool stream.
func queueMsgs(t *testing.T, url string) uint64 {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), protocol.WorkerQueueStream(bus.Default))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// waitQueue waits until n calls wait in the pool stream.
func waitQueue(t *testing.T, url string, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for queueMsgs(t, url) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in the pool stream, want %d", queueMsgs(t, url), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantEmptyQueue checks that no call is left in the pool stream.
func wantEmptyQueue(t *testing.T, url string) {
	t.Helper()
	waitQueue(t, url, 0)
}

// TestPoolLostQueueIsRefilled purges the pool stream while a call waits
// in it (as a restarted server loses a one-replica stream in memory): the
// node finds the call missing, though no worker reported on it, and
// queues it again; it runs once a worker has room.
func TestPoolLostQueueIsRefilled(t *testing.T) {
	rt, url := node(t)
	h, a, first := busyPool(t, rt, url)
	queued, done := runAll(t, t.Context(), a, 1, "hold")
	waitQueue(t, url, 1)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), protocol.WorkerQueueStream(bus.Default))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := queueMsgs(t, url); n != 0 {
		t.Fatalf("%d calls in the stream after the purge", n)
	}
	waitQueue(t, url, 1) // queued again
	close(h.release)
	for _, ch := range []chan outcome{first, done} {
		if o := <-ch; o.err != nil || o.res.Status != weft.StatusCompleted {
			t.Fatalf("run: %+v %v", o.res, o.err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ran) != 2 || !strings.HasSuffix(h.ran[1], queued[0].ID()+" c1") {
		t.Errorf("calls ran %v, want the first, then the refilled one once", h.ran)
	}
}

// TestPoolStreamUnavailable deletes the pool stream before a call: the
// node's publishes fail, and it tries the same delivery again until its
// queue wait (here 2 s) is over, then fails the call saying it could not
// queue it, without spending the call's deliveries on publishes that
// never reached a worker.
func TestPoolStreamUnavailable(t *testing.T) {
	rt, url := nodeWith(t, weft.Config{WorkerQueueWait: 2 * time.Second})
	h := newHoldTool()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	w, err := worker.New(nc, []toolsets.Tool{h.tool(t, "gone")}, worker.WithID("gone"), worker.WithPool("gone"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	a := agent(t, rt, "hold")
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(t.Context(), protocol.WorkerQueueStream(bus.Default)); err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	res, err := s.Run(t.Context(), prompt(t, call("c1", "hold", `{}`)))
	if err != nil {
		t.Fatal(err)
	}
	r := returns(t, s, res.RunID)["c1"]
	if r.Kind != toolsets.KindExecution || !strings.Contains(content(r), "could not queue the call for pool gone within 2s") {
		t.Errorf("return %s %q, want an execution error saying the call could not be queued", r.Kind, content(r))
	}
}
