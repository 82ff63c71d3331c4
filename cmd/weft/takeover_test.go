package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// serve --nats takes over the running session of a node that dies, with
// no command for the session and no periodic Recover: the lease watcher
// hears the lease expire, and serve notes the takeover on stderr.
func TestServeTakesOverFromDeadNode(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()
	const ttl = 400 * time.Millisecond
	const session = "taken-over"

	// Node A runs the demo agent's name with a tool that blocks: its run
	// stays running until A dies.
	a, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: "node-a", LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	started := make(chan struct{}, 1)
	block, err := toolsets.NewContextFunc("block", func(ctx context.Context, _ *toolsets.ToolContext, _ struct{}) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "b1", Name: "block", Arguments: json.RawMessage(`{}`)}}}, nil
	})
	if _, err := a.NewAgent(demoAgent, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{block}}); err != nil {
		t.Fatal(err)
	}
	// Start the run with a bare command: no caller waits for it.
	subject, err := a.Subjects().Command(session, actors.VerbStart)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(actors.StartCommand{RunID: "r1", Agent: demoAgent, Prompt: "block"})
	msg, err := a.Conn().RequestWithContext(t.Context(), subject, body)
	if err != nil {
		t.Fatal(err)
	}
	var reply actors.CommandReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || reply.Error != nil {
		t.Fatalf("start: %s (%v)", msg.Data, err)
	}
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("A's tool never started")
	}

	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = run(ctx, []string{"serve", "--nats", url, "--node-id", "node-b", "--lease-ttl", ttl.String(), "--json"}, stdout, stderr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	if rep := decodeJSON[serveReport](t, first); rep.Node != "node-b" || len(rep.Recovered) != 0 {
		t.Fatalf("serve report = %+v", rep)
	}

	// A crash: the connection drops, the lease is neither renewed nor
	// released.
	a.Conn().Close()
	_ = a.Close()

	wctx, wcancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer wcancel()
	stderr.waitFor(t, wctx, done, "weft serve: node node-b drives session "+session+"\n")
	cancel()
	<-done
	if serveErr != nil {
		t.Fatalf("serve: %v\nstderr:\n%s", serveErr, stderr.String())
	}
}
