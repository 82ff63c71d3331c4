package weft_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// listeningServer starts an embedded nats-server that accepts network
// clients on a loopback port: the "external" NATS of a two-node cluster.
func listeningServer(t *testing.T) string {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

// deployModel asks for the deploy tool, then answers "deployed" once it
// sees the tool's return: any node can drive the run from the stream.
func deployModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		msgs := req.Messages
		if n := len(msgs); n > 0 && len(msgs[n-1].ToolReturns()) > 0 {
			return &llm.Response{Text: "deployed"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{call("d1", "deploy", `{}`)}}, nil
	})
}

func clusterNode(t *testing.T, url, node string, runs *atomic.Int32) (*weft.Runtime, *weft.Agent) {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: node, LeaseTTL: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	deploy := tool(t, "deploy", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		runs.Add(1)
		return "ok", nil
	})
	a, err := rt.NewAgent("deployer", weft.AgentConfig{Model: deployModel(), Tools: []toolsets.Tool{deploy}, ApprovalRequiredTools: []string{"deploy"}})
	if err != nil {
		t.Fatal(err)
	}
	return rt, a
}

// Node A drives a run until it waits for approval, then dies without
// releasing its lease. The resume sent to the cluster reaches node B,
// which takes the session over once A's lease expires, replays its
// stream and completes the run.
func TestClusterTakeoverAfterNodeDies(t *testing.T) {
	url := listeningServer(t)
	var runsA, runsB atomic.Int32
	rtA, agentA := clusterNode(t, url, "node-a", &runsA)
	sess := agentA.NewSession()
	waiting, err := sess.Run(t.Context(), "deploy")
	if err != nil || waiting.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", waiting, err)
	}
	if owner, err := rtA.SessionOwner(t.Context(), sess.ID()); err != nil || owner != "node-a" {
		t.Fatalf("owner = %q, %v", owner, err)
	}

	rtB, agentB := clusterNode(t, url, "node-b", &runsB)
	// A crash: the connection drops, the lease is neither renewed nor
	// released.
	rtA.Conn().Close()
	rtA.Close()

	// Until A's lease expires the command is forwarded to A, which no
	// longer answers: the caller retries.
	sessB := agentB.Session(sess.ID())
	var res *weft.Result
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		res, err = sessB.Resume(ctx, weft.Approve("d1", "ops", nil))
		cancel()
		if err == nil {
			break
		}
		retry := errors.Is(err, nats.ErrNoResponders) || errors.Is(err, actors.ErrSessionOwned) || errors.Is(err, context.DeadlineExceeded)
		if !retry || time.Now().After(deadline) {
			t.Fatalf("Resume: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res.Status != weft.StatusCompleted || res.Output != "deployed" {
		t.Fatalf("Resume = %+v", res)
	}
	if runsA.Load() != 0 || runsB.Load() != 1 {
		t.Errorf("deploy ran %d times on A and %d on B, want 0 and 1", runsA.Load(), runsB.Load())
	}
	if owner, err := rtB.SessionOwner(t.Context(), sess.ID()); err != nil || owner != "node-b" {
		t.Fatalf("owner after takeover = %q, %v", owner, err)
	}
	evs, err := rtB.Store().ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	n := map[events.Type]int{}
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			t.Fatalf("event %d has version %d", i, ev.Version)
		}
		n[ev.Type]++
	}
	if n[events.TypeRunStarted] != 1 || n[events.TypeRunResumed] != 1 || n[events.TypeRunCompleted] != 1 {
		t.Errorf("event counts %v", n)
	}
}

// A command reaching a node that does not own the session is forwarded
// to the owner, which answers the caller.
func TestClusterForwardsToOwner(t *testing.T) {
	url := listeningServer(t)
	var runsA, runsB atomic.Int32
	rtA, agentA := clusterNode(t, url, "node-a", &runsA)
	sess := agentA.NewSession()
	if w, err := sess.Run(t.Context(), "deploy"); err != nil || w.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", w, err)
	}
	_, agentB := clusterNode(t, url, "node-b", &runsB)
	// Commands through B reach A (directly, or forwarded by B when the
	// queue group picks B): a refused resume is answered by the owner,
	// which records the refusal (decision.refused) and nothing else.
	for range 6 {
		_, err := agentB.Session(sess.ID()).Resume(t.Context(), weft.Approve("nope", "ops", nil))
		if !errors.Is(err, weft.ErrUnknownDecision) {
			t.Fatalf("resume with an unknown decision: %v", err)
		}
	}
	// Cancel through B: whichever node the queue group picks, A (the
	// owner) acts and answers.
	if err := agentB.Session(sess.ID()).Cancel(t.Context(), "", "ops", "stop"); err != nil {
		t.Fatal(err)
	}
	st, err := rtA.Store().ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if last := st[len(st)-1]; last.Type != events.TypeRunCancelled {
		t.Fatalf("last event %s", last.Type)
	}
	var refused int
	for _, ev := range st {
		switch ev.Type {
		case events.TypeDecisionRefused:
			refused++
		case events.TypeApprovalDecided:
			t.Errorf("a refused resume recorded %s", ev.Type)
		}
	}
	if refused != 6 {
		t.Errorf("%d decision.refused, want one per refused resume (6)", refused)
	}
	if owner, _ := rtA.SessionOwner(t.Context(), sess.ID()); owner != "node-a" {
		t.Fatalf("owner = %q", owner)
	}
}

func TestClusterConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  weft.Config
		want string
	}{
		{name: "credentials without external NATS", cfg: weft.Config{DataDir: "x", NATSToken: "t"}, want: "NATSToken needs an external NATS"},
		{name: "tls without external NATS", cfg: weft.Config{DataDir: "x", TLS: &bus.TLSConfig{}}, want: "TLS needs an external NATS"},
		{name: "replicas without external NATS", cfg: weft.Config{DataDir: "x", Replicas: 3}, want: "Replicas needs an external NATS"},
		{name: "node id without external NATS", cfg: weft.Config{DataDir: "x", NodeID: "n"}, want: "NodeID needs an external NATS"},
		{name: "too many replicas", cfg: weft.Config{NATSURL: "nats://127.0.0.1:1", Replicas: 9}, want: "Replicas 9"},
		{name: "negative lease ttl", cfg: weft.Config{NATSURL: "nats://127.0.0.1:1", LeaseTTL: -time.Second}, want: "negative LeaseTTL"},
		{name: "empty seed URL", cfg: weft.Config{NATSURLs: []string{"nats://127.0.0.1:1", ""}}, want: "empty URL"},
		{name: "nothing set", cfg: weft.Config{}, want: "needs a DataDir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := weft.Start(t.Context(), tc.cfg)
			if !errors.Is(err, weft.ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrBadConfig with %q", err, tc.want)
			}
		})
	}
}

// Errors that only the server or the connection can raise.
func TestClusterConfigServerErrors(t *testing.T) {
	url := listeningServer(t)
	tests := []struct {
		name string
		cfg  weft.Config
		want string
	}{
		{name: "two credentials", cfg: weft.Config{NATSURL: url, NATSToken: "t", NATSUser: "u"}, want: "more than one authentication option"},
		{name: "missing creds file", cfg: weft.Config{NATSURL: url, NATSCredsFile: "does-not-exist.creds"}, want: "creds file"},
		{name: "bad node id", cfg: weft.Config{NATSURL: url, NodeID: "a.b"}, want: "node id"},
		{name: "replicas on a single server", cfg: weft.Config{NATSURLs: []string{url}, Replicas: 3}, want: "replicas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := weft.Start(t.Context(), tc.cfg)
			if err == nil {
				rt.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(strings.ToLower(err.Error()), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
