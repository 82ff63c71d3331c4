package worker_test

import (
	"context"
	"encoding/json"
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

// TestHandOverKeepsRemoteCalls: node A stops cleanly while its run's
// remote call runs on a worker (or, in a pool, waits in the queue behind a
// busy worker); node B, which watches the leases, takes the session over
// at once and delivers the call again under the same ids. A stopping is
// not the run ending: it sends the workers no cancel, so the running call
// is not cancelled and the queued one is not answered "cancelled" (a
// worker remembers a cancel that precedes its call); the call's return
// completes the run on B. (The call may still run twice: if it returns
// before B's delivery reaches the worker, that delivery runs it again, as
// at-least-once allows.)
func TestHandOverKeepsRemoteCalls(t *testing.T) {
	for _, tc := range []struct {
		name, pool string
		queued     bool
	}{
		{name: "group/running"},
		{name: "pool/running", pool: "handover"},
		{name: "pool/queued", pool: "handover", queued: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testHandOver(t, tc.pool, tc.queued) })
	}
}

func testHandOver(t *testing.T, pool string, queued bool) {
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	h := newHoldTool()
	var opts []worker.Option
	if pool != "" {
		opts = append(opts, worker.WithPool(pool))
	}
	if queued {
		opts = append(opts, worker.WithConcurrency(1))
	}
	serveInProcess(t, url, []toolsets.Tool{h.tool(t, "w")}, append(opts, worker.WithID("w"))...)
	startNode := func(id string) (*weft.Runtime, *weft.Agent) {
		// A lease TTL longer than the test: only A's release hands over.
		rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: id, LeaseTTL: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Close() })
		return rt, agent(t, rt, "hold")
	}
	// A alone first: it drives the session.
	rtA, a := startNode("node-a")
	if queued {
		// A call from outside weft keeps the worker's one slot busy.
		blockPool(t, url, pool, "hold")
		waitStarted(t, h, 1)
	}
	s := a.NewSession()
	go func() { _, _ = s.Run(t.Context(), prompt(t, call("c1", "hold", `{}`))) }()
	if queued {
		waitQueue(t, url, 1)
	} else {
		waitStarted(t, h, 1)
	}

	rtB, b := startNode("node-b")
	wctx, stop := context.WithCancel(t.Context())
	watched := make(chan error, 1)
	go func() { watched <- rtB.WatchTakeovers(wctx, nil) }()
	t.Cleanup(func() {
		stop()
		if err := <-watched; err != nil {
			t.Errorf("WatchTakeovers: %v", err)
		}
	})
	if err := rtA.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		owner, err := rtB.SessionOwner(t.Context(), s.ID())
		if err == nil && owner == "node-b" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B does not drive the session: owner %q, %v", owner, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(h.release)

	sb := b.Session(s.ID())
	st, err := sb.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(st.Runs))
	}
	for _, r := range st.Runs {
		id := r.ID
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		res, err := sb.Wait(ctx, id)
		cancel()
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("the run on B: %+v %v", res, err)
		}
		wantOneReturn(t, sb, id, "c1", "held by w")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.stopped) > 0 {
		t.Errorf("calls cancelled by the hand-over: %v", h.stopped)
	}
}

// blockPool publishes a call of tool into pool's queue as a raw protocol
// client (its reports go to an inbox nobody reads): it keeps a worker
// slot busy until the tool returns.
func blockPool(t *testing.T, url, pool, tool string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.WorkerQueueSubject(bus.Default, pool, tool)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(protocol.ToolRequest{SessionID: "outside", RunID: "r", CallID: "c1", Name: tool, Arguments: json.RawMessage(`{}`)})
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(protocol.HeaderCallID, "c1")
	msg.Header.Set(protocol.HeaderDelivery, "1")
	msg.Header.Set(protocol.HeaderHeartbeat, "250")
	msg.Header.Set(protocol.HeaderReply, nc.NewInbox())
	if _, err := js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
}
