package actors

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/bus/bustest"
	"github.com/weft-run/weft/events/memstore"
)

// closeBound is how long Close of a host whose NATS connection is down
// may take in these tests. It is generous (a loaded machine, -race), and
// still far below leaseTimeout, which a Close waiting on a request the
// connection cannot answer would spend on each lease it releases or
// renews.
const closeBound = 3 * time.Second

// A host holding a lease with a run in flight, whose NATS connection goes
// down, closes without waiting on lease requests the connection cannot
// answer: the lease expires by its TTL.
func TestCloseWithConnectionDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		down func(srv *bus.Server, nc *nats.Conn)
	}{
		{
			// The connection is left reconnecting: a request on it waits
			// for its timeout.
			name: "server gone",
			ttl:  5 * time.Minute,
			down: func(srv *bus.Server, _ *nats.Conn) { srv.Shutdown() },
		},
		{
			// Renewals run every TTL/3: within two TTLs one is waiting
			// on the dead connection when Close begins.
			name: "server gone while renewing",
			ttl:  MinLeaseTTL,
			down: func(srv *bus.Server, _ *nats.Conn) {
				srv.Shutdown()
				time.Sleep(2 * MinLeaseTTL)
			},
		},
		{
			name: "connection closed",
			ttl:  5 * time.Minute,
			down: func(_ *bus.Server, nc *nats.Conn) { nc.Close() },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, nc := bustest.Server(t)
			n := newTakeoverNode(t, func() *nats.Conn { return nc }, memstore.New(), "node-a",
				nodeOptions{ttl: tc.ttl, markers: true, block: true})
			startBlockedRun(t, n, "down")
			if held := n.h.cfg.Leases.Held(); len(held) != 1 {
				t.Fatalf("held leases %v, want one", held)
			}

			tc.down(srv, nc)
			closeWithin(t, n.h)
			if held := n.h.cfg.Leases.Held(); len(held) != 0 {
				t.Errorf("held leases after Close %v, want none", held)
			}
		})
	}
}

// closeWithin closes h and fails the test unless Close returns within
// closeBound.
func closeWithin(t *testing.T, h *Host) {
	t.Helper()
	closeWithinBound(t, h, closeBound)
}

// closeWithinBound closes h and fails the test unless Close returns within
// bound.
func closeWithinBound(t *testing.T, h *Host, bound time.Duration) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(bound):
		t.Fatalf("Close did not return within %v", bound)
	}
}
