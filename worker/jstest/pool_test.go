package jstest

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// connect opens a client connection to url as the node role (the tests
// that use it send calls or inspect the pool stream as a node does),
// closed at cleanup.
func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	return connectAs(t, url, bus.RoleNode)
}

// queueStream returns the pool stream on url.
func queueStream(t *testing.T, url string) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), protocol.WorkerQueueStream(bus.Default))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// queueMsgs returns how many calls wait in the pool stream.
func queueMsgs(t *testing.T, st jetstream.Stream) uint64 {
	t.Helper()
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// waitQueue waits until n calls wait in the pool stream on url.
func waitQueue(t *testing.T, url string, n uint64) {
	t.Helper()
	st := queueStream(t, url)
	deadline := time.Now().Add(wait)
	for got := queueMsgs(t, st); got != n; got = queueMsgs(t, st) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in the pool stream, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quiet fails if the worker prints a line starting with prefix within d.
func (w *jsWorker) quiet(t *testing.T, prefix string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("the worker exited")
			}
			if strings.HasPrefix(l, prefix) {
				t.Fatalf("the worker printed %q", l)
			}
		case <-timeout:
			return
		}
	}
}

// describe returns the descriptions the workers on url answer with, by
// worker id, once every worker of ids answered. It asks again every
// 250 ms, as a node does, for workers that subscribe later.
func describe(t *testing.T, url string, ids ...string) map[string]protocol.WorkerDescription {
	t.Helper()
	nc := connect(t, url)
	inbox := nc.NewInbox()
	answers, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]protocol.WorkerDescription{}
	missing := func() []string {
		var out []string
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				out = append(out, id)
			}
		}
		return out
	}
	deadline := time.Now().Add(wait)
	for len(missing()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("workers %v did not answer a describe request within %v", missing(), wait)
		}
		if err := nc.PublishRequest(protocol.WorkerDescribeSubject(bus.Default), inbox, nil); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := answers.NextMsg(250 * time.Millisecond)
			if errors.Is(err, nats.ErrNoResponders) {
				time.Sleep(250 * time.Millisecond) // no worker subscribed yet
				break
			}
			if errors.Is(err, nats.ErrTimeout) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var d protocol.WorkerDescription
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatalf("describe answer %q: %v", m.Data, err)
			}
			got[d.WorkerID] = d
		}
	}
	return got
}

// TestJSPoolDescribes checks that a pooled JavaScript worker names its
// pool in its description, and a worker of the queue group names none.
func TestJSPoolDescribes(t *testing.T) {
	url := server(t)
	startPooledJSWorker(t, url, "pooled", "jspool", 2)
	startJSWorker(t, url, "grouped")
	got := map[string]string{}
	for id, d := range describe(t, url, "pooled", "grouped") {
		got[id] = d.Pool
	}
	if d := cmp.Diff(map[string]string{"pooled": "jspool", "grouped": ""}, got); d != "" {
		t.Errorf("pools described (-want +got):\n%s", d)
	}
}

// TestJSPoolBadSettings starts the JavaScript worker with bad pool
// settings: it refuses to start, with exit status 2 and a message.
func TestJSPoolBadSettings(t *testing.T) {
	nodeBin := nodeBinary(t)
	url := server(t)
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error message
	}{
		{"pool with a dot", []string{"a.b"}, "pool name"},
		{"pool with a wildcard", []string{"*"}, "pool name"},
		{"long pool", []string{strings.Repeat("p", 65)}, "pool name"},
		{"zero concurrency", []string{"p", "0"}, "concurrency"},
		{"fractional concurrency", []string{"p", "1.5"}, "concurrency"},
		{"concurrency without a pool", []string{"", "4"}, "POOL"},
		{"zero queue replicas", []string{"p", "", "0"}, "queue replicas"},
		{"six queue replicas", []string{"p", "4", "6"}, "queue replicas"},
		{"queue replicas without a pool", []string{"", "", "3"}, "POOL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			cmd := exec.CommandContext(ctx, nodeBin, append([]string{"worker.mjs", url, "bad"}, tc.args...)...)
			cmd.Dir = workerDir
			cmd.Env = workerEnv(t, url)
			out, err := cmd.CombinedOutput()
			var exit interface{ ExitCode() int }
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("worker.mjs %q: %v (output %q), want exit status 2", tc.args, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("worker.mjs %q printed %q, want it to mention %q", tc.args, out, tc.want)
			}
		})
	}
}

// TestJSPoolQueueReplicas starts the JavaScript worker, the first of its
// pool, with three queue replicas on a single server: the server refuses
// the pool stream (it cannot place three replicas) and the worker exits
// saying so; with one replica it serves and the stream has one.
func TestJSPoolQueueReplicas(t *testing.T) {
	nodeBin := nodeBinary(t)
	url := server(t)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "worker.mjs", url, "replicated", "p", "", "3")
	cmd.Dir = workerDir
	cmd.Env = workerEnv(t, url)
	out, err := cmd.CombinedOutput()
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("worker.mjs with 3 queue replicas on one server: %v (output %q), want exit status 1", err, out)
	}
	if !strings.Contains(string(out), "join pool p") || !strings.Contains(strings.ToLower(string(out)), "replica") {
		t.Errorf("worker.mjs printed %q, want the refused pool stream's replicas", out)
	}

	startJSWorkerArgs(t, url, "single", "p", "", "1")
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, protocol.WorkerQueueStream(bus.Default))
	if err != nil {
		t.Fatal(err)
	}
	if n := st.CachedInfo().Config.Replicas; n != 1 {
		t.Errorf("the pool stream has %d replicas, want 1", n)
	}
}

// TestJSPoolDispatchIsLoadAware runs two pooled JavaScript workers that
// each run one call at a time and two sessions calling js_slow at once:
// a call goes only to a worker with room for it, so both calls run at the
// same time, one on each worker. (The core queue group hands each call
// to a worker at random, regardless of its load: both land on one worker
// in half the runs, and the other worker never starts one.)
func TestJSPoolDispatchIsLoadAware(t *testing.T) {
	rt, url := node(t)
	w1 := startPooledJSWorker(t, url, "js-1", "jspool", 1)
	w2 := startPooledJSWorker(t, url, "js-2", "jspool", 1)
	a := agent(t, rt)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 2)
	for _, id := range []string{"c1", "c2"} {
		s := a.NewSession()
		go func() {
			// A minute: the calls end only by the test's cancel, so
			// both run at once when both started.
			_, err := s.Run(ctx, prompt(t, call(id, "js_slow", `{"ms":60000}`)))
			done <- err
		}()
	}
	started := map[string]bool{}
	for _, w := range []*jsWorker{w1, w2} {
		l, err := w.next("STARTED")
		if err != nil {
			t.Fatalf("not every worker runs a call (both on one worker?): %v", err)
		}
		started[l] = true
	}
	// Each worker started one of the two calls.
	if !(started["STARTED js-1 c1"] && started["STARTED js-2 c2"] || started["STARTED js-1 c2"] && started["STARTED js-2 c1"]) {
		t.Errorf("calls started: %v, want c1 and c2, one on each worker", started)
	}
	waitQueue(t, url, 0)
	cancel()
	for _, w := range []*jsWorker{w1, w2} {
		w.expect(t, "CANCELLED")
	}
	for range 2 {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	}
}

// TestJSPoolQueuedCallRunsOnce sends a call while the only pooled
// JavaScript worker (one call at a time) is busy: the call waits in the
// pool's queue, past the heartbeat deadline, neither taken by the worker
// nor sent again by the node; once the worker frees it runs the call,
// exactly once.
func TestJSPoolQueuedCallRunsOnce(t *testing.T) {
	rt, url := node(t)
	w := startPooledJSWorker(t, url, "js-1", "single", 1)
	a := agent(t, rt)
	busyCtx, cancelBusy := context.WithCancel(t.Context())
	defer cancelBusy()
	busyDone := make(chan error, 1)
	go func() {
		// A minute: it ends by its cancel, which frees the worker.
		_, err := a.NewSession().Run(busyCtx, prompt(t, call("busy", "js_slow", `{"ms":60000}`)))
		busyDone <- err
	}()
	if got := w.expect(t, "STARTED"); got != "STARTED js-1 busy" {
		t.Fatalf("worker printed %q, want STARTED js-1 busy", got)
	}
	waitQueue(t, url, 0) // the busy call was taken out of the queue

	queued := a.NewSession()
	type outcome struct {
		res *weft.Result
		err error
	}
	queuedDone := make(chan outcome, 1)
	go func() {
		res, err := queued.Run(t.Context(), prompt(t, call("queued", "js_slow", `{"ms":20}`)))
		queuedDone <- outcome{res, err}
	}()
	// The call waits in the queue: the worker has no free slot to pull it.
	waitQueue(t, url, 1)
	// Longer than the heartbeat deadline: the node does not send it again
	// (it would be a second message), the worker does not take it.
	w.quiet(t, "STARTED", 3*protocol.MissedHeartbeats*protocol.WorkerHeartbeat)
	waitQueue(t, url, 1)

	cancelBusy()
	if got := w.expect(t, "CANCELLED"); got != "CANCELLED js-1 busy" {
		t.Fatalf("worker printed %q, want CANCELLED js-1 busy", got)
	}
	if err := <-busyDone; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("busy run: %v", err)
	}
	if got := w.expect(t, "STARTED"); got != "STARTED js-1 queued" {
		t.Fatalf("worker printed %q, want STARTED js-1 queued", got)
	}
	var o outcome
	select {
	case o = <-queuedDone:
	case <-time.After(wait):
		t.Fatal("the queued run did not end within", wait)
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.Status != weft.StatusCompleted {
		t.Errorf("the queued run is %s, want completed", o.res.Status)
	}
	r := returns(t, queued, o.res.RunID)["queued"]
	if r.Kind != toolsets.KindSuccess || string(r.Content) != `"slept 20"` {
		t.Errorf("the queued call returned %s %s, want success \"slept 20\"", r.Kind, r.Content)
	}
	waitQueue(t, url, 0)
	// The worker prints STARTED before it runs a call: every call it ran
	// is printed by the time it exits.
	for _, l := range w.stop(t) {
		if strings.HasPrefix(l, "STARTED") {
			t.Errorf("the worker ran another call: %q", l)
		}
	}
}

// publishPooled publishes a call of tool to pool into the pool stream, as
// a node does, with reports to reply.
func publishPooled(t *testing.T, nc *nats.Conn, pool, tool, reply string, req protocol.ToolRequest) {
	t.Helper()
	subject, err := protocol.WorkerQueueSubject(bus.Default, pool, tool)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	msg.Header.Set(protocol.HeaderCallID, req.CallID)
	msg.Header.Set(protocol.HeaderDelivery, "1")
	msg.Header.Set(protocol.HeaderHeartbeat, strconv.Itoa(int(protocol.WorkerHeartbeat/time.Millisecond)))
	msg.Header.Set(protocol.HeaderReply, reply)
	msg.Header.Set(nats.MsgIdHdr, req.SessionID+"/"+req.RunID+"/"+req.CallID+"/1")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
}

// TestJSPoolRawProtocol drives a pooled JavaScript worker with messages
// published into the pool stream, as a node does: a call of a tool it
// serves is reported on Weft-Reply, a heartbeat first and a return last,
// and leaves the queue; a call of a tool it does not serve is handed back
// to the pool (delivered again, still queued) and gets no report.
func TestJSPoolRawProtocol(t *testing.T) {
	url := server(t)
	startPooledJSWorker(t, url, "js-1", "raw", 1)
	nc := connect(t, url)
	reports := func() *nats.Subscription {
		sub, err := nc.SubscribeSync(nc.NewInbox())
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}

	served := reports()
	publishPooled(t, nc, "raw", "js_add", served.Subject,
		protocol.ToolRequest{SessionID: "s1", RunID: "r1", CallID: "c1", Name: "js_add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})
	var types []string
	for {
		m, err := served.NextMsg(wait)
		if err != nil {
			t.Fatalf("reports %v, then: %v", types, err)
		}
		var r protocol.ToolReport
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("bad report %q: %v", m.Data, err)
		}
		if r.CallID != "c1" || r.Tool != "js_add" {
			t.Errorf("report of call %q tool %q, want c1 js_add", r.CallID, r.Tool)
		}
		if len(types) == 0 || types[len(types)-1] != r.Type {
			types = append(types, r.Type) // heartbeats collapsed
		}
		if r.Type == protocol.ReportReturned {
			if r.Return == nil || r.Return.Kind != toolsets.KindSuccess || string(r.Return.Content) != "3" {
				t.Errorf("return %+v, want success 3", r.Return)
			}
			break
		}
	}
	if d := cmp.Diff([]string{protocol.ReportHeartbeat, protocol.ReportReturned}, types); d != "" {
		t.Errorf("reports (-want +got):\n%s", d)
	}
	waitQueue(t, url, 0)

	unserved := reports()
	publishPooled(t, nc, "raw", "go_only", unserved.Subject,
		protocol.ToolRequest{SessionID: "s1", RunID: "r1", CallID: "c2", Name: "go_only", Arguments: json.RawMessage(`{}`)})
	// Handed back: the consumer delivers it again and again, and it stays
	// in the queue.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(t.Context(), protocol.WorkerQueueStream(bus.Default), "pool_raw")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for {
		info, err := cons.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumRedelivered > 0 && info.Delivered.Consumer >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call of an unserved tool was delivered %d times, want it handed back and delivered again", info.Delivered.Consumer)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitQueue(t, url, 1)
	if m, err := unserved.NextMsg(10 * time.Millisecond); err == nil {
		t.Errorf("report %s on a call of a tool the worker does not serve", m.Data)
	}
}

// TestJSPoolWithGoWorker puts a JavaScript worker and a Go worker in one
// pool, each starting first: both create or update the pool's consumer
// with the configuration of docs/worker-protocol.md, so the second one
// joins (JetStream refuses some changes to a consumer, e.g. its max
// waiting pulls), and calls of the pool return.
func TestJSPoolWithGoWorker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		jsFirst bool
	}{
		{"Go worker first", false},
		{"JavaScript worker first", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, url := node(t)
			if tc.jsFirst {
				startPooledJSWorker(t, url, "js-1", "mixed", 0)
			}
			serveGo(t, url, "go-1", "mixed")
			if !tc.jsFirst {
				startPooledJSWorker(t, url, "js-1", "mixed", 0)
			}
			got := map[string]string{}
			for id, d := range describe(t, url, "js-1", "go-1") {
				got[id] = d.Pool
			}
			if d := cmp.Diff(map[string]string{"js-1": "mixed", "go-1": "mixed"}, got); d != "" {
				t.Errorf("pools described (-want +got):\n%s", d)
			}
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			ts, err := rt.RemoteTools(ctx, "js_add")
			if err != nil {
				t.Fatal(err)
			}
			a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: callModel(), Toolsets: []toolsets.Toolset{ts}})
			if err != nil {
				t.Fatal(err)
			}
			s := a.NewSession()
			res, err := s.Run(ctx, prompt(t, call("c1", "js_add", `{"a":2,"b":40}`), call("c2", "js_add", `{"a":1,"b":1}`)))
			if err != nil {
				t.Fatal(err)
			}
			got = map[string]string{}
			for id, r := range returns(t, s, res.RunID) {
				got[id] = string(r.Kind) + " " + string(r.Content)
			}
			if d := cmp.Diff(map[string]string{"c1": "success 42", "c2": "success 2"}, got); d != "" {
				t.Errorf("returns (-want +got):\n%s", d)
			}
		})
	}
}

// addArgs are the arguments of js_add.
type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// serveGo runs a Go worker with id in pool on url, serving js_add as the
// JavaScript worker does, until the test ends.
func serveGo(t *testing.T, url, id, pool string) {
	t.Helper()
	add, err := toolsets.NewFunc("js_add", func(_ context.Context, a addArgs) (float64, error) { return a.A + a.B, nil },
		toolsets.WithDescription("Add two numbers (served by a Go worker)."))
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(connectAs(t, url, bus.RoleWorker), []toolsets.Tool{add}, worker.WithID(id), worker.WithPool(pool), worker.WithDrain(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Go worker %s: %v", id, err)
		}
	})
	// It serves once it answers a describe request.
	describe(t, url, id)
}

// TestJSPoolGracefulStop stops a pooled JavaScript worker (SIGTERM) while
// it runs a call and has a free slot: it lets the running call finish and
// return, and takes no call after the stop began (one its pending pull
// still receives goes back to the pool): the call sent then runs on the
// other worker of the pool.
func TestJSPoolGracefulStop(t *testing.T) {
	rt, url := node(t)
	w1 := startPooledJSWorker(t, url, "js-1", "jspool", 2)
	a := agent(t, rt)
	type outcome struct {
		s   *weft.Session
		res *weft.Result
		err error
	}
	run := func(id string, ms int) chan outcome {
		out := make(chan outcome, 1)
		s := a.NewSession()
		go func() {
			res, err := s.Run(t.Context(), prompt(t, call(id, "js_slow", `{"ms":`+strconv.Itoa(ms)+`}`)))
			out <- outcome{s, res, err}
		}()
		return out
	}
	// Long enough to be running still when the second call is sent.
	longDone := run("long", 3000)
	if got := w1.expect(t, "STARTED"); got != "STARTED js-1 long" {
		t.Fatalf("worker printed %q, want STARTED js-1 long", got)
	}
	// The second worker joins after the long call started on the first.
	w2 := startPooledJSWorker(t, url, "js-2", "jspool", 2)
	if err := w1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w1.expect(t, "STOPPING")
	// The first worker's free slot still has a pull waiting at the server,
	// older than the second worker's: the server may hand it the call.
	afterDone := run("after", 20)
	if got := w2.expect(t, "STARTED"); got != "STARTED js-2 after" {
		t.Fatalf("second worker printed %q, want STARTED js-2 after", got)
	}
	want := map[string]string{"long": `success "slept 3000"`, "after": `success "slept 20"`}
	got := map[string]string{}
	for _, done := range []chan outcome{longDone, afterDone} {
		var o outcome
		select {
		case o = <-done:
		case <-time.After(wait):
			t.Fatal("a run did not end within", wait)
		}
		if o.err != nil {
			t.Fatal(o.err)
		}
		for id, r := range returns(t, o.s, o.res.RunID) {
			got[id] = string(r.Kind) + " " + string(r.Content)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("returns (-want +got):\n%s", d)
	}
	// The first worker ran no other call, and exits once its call ended;
	// the second did not run the long call again.
	for _, l := range w1.rest(t) {
		if strings.HasPrefix(l, "STARTED") {
			t.Errorf("the stopping worker ran a call: %q", l)
		}
	}
	for _, l := range w2.stop(t) {
		if strings.HasPrefix(l, "STARTED") {
			t.Errorf("the second worker ran another call: %q", l)
		}
	}
	waitQueue(t, url, 0)
}
