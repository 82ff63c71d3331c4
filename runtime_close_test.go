package weft_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
)

// A node of a cluster whose NATS server goes away (its connection left
// reconnecting) while it holds a session's lease closes without waiting
// on requests the connection cannot answer: the lease expires by its TTL.
// The bound is generous (a loaded machine, -race) and far below the
// lease and guard timeouts such a wait would spend.
func TestCloseWithServerGone(t *testing.T) {
	const closeBound = 3 * time.Second
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	var runs atomic.Int32
	rt, agent := clusterNode(t, srv.ClientURL(), "node-a", &runs)
	sess := agent.NewSession()
	waiting, err := sess.Run(t.Context(), "deploy")
	if err != nil || waiting.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", waiting, err)
	}
	if owner, err := rt.SessionOwner(t.Context(), sess.ID()); err != nil || owner != "node-a" {
		t.Fatalf("owner = %q, %v", owner, err)
	}

	srv.Shutdown()
	closed := make(chan error, 1)
	go func() { closed <- rt.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(closeBound):
		t.Fatalf("Close did not return within %v", closeBound)
	}
}
