package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
)

// testNATS starts an embedded server and returns a connection factory.
func testNATS(t testing.TB) func() *nats.Conn {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return func() *nats.Conn {
		nc, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
}

func newTestLeases(t *testing.T, nc *nats.Conn, node string, ttl time.Duration) *Leases {
	t.Helper()
	l, err := NewLeases(t.Context(), nc, LeaseConfig{NodeID: node, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func acquire(t *testing.T, l *Leases, session string) string {
	t.Helper()
	owner, err := l.Acquire(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

func TestLeaseAcquireRenewExpireTakeover(t *testing.T) {
	conn := testNATS(t)
	nc := conn()
	const ttl = 400 * time.Millisecond
	a := newTestLeases(t, nc, "node-a", ttl)
	b := newTestLeases(t, conn(), "node-b", ttl)
	const s = "sess.1 with spaces"

	if got := acquire(t, a, s); got != "node-a" {
		t.Fatalf("a acquires: owner %q", got)
	}
	if got := acquire(t, b, s); got != "node-a" {
		t.Fatalf("b while a holds: owner %q, want node-a", got)
	}
	if got := acquire(t, a, s); got != "node-a" {
		t.Fatalf("a again (renewal): owner %q", got)
	}
	// a renews for longer than a TTL: b never gets it.
	for range 4 {
		ok, err := a.Renew(t.Context(), s)
		if err != nil || !ok {
			t.Fatalf("renew: %v, %v", ok, err)
		}
		time.Sleep(ttl / 3)
	}
	if got := acquire(t, b, s); got != "node-a" {
		t.Fatalf("b after renewals: owner %q, want node-a", got)
	}
	// a stops renewing (a crash): b takes over once the TTL has passed.
	a.Forget(s)
	eventually(t, "b takes the expired lease", func() bool { return acquire(t, b, s) == "node-b" })
	if got, err := a.Owner(t.Context(), s); err != nil || got != "node-b" {
		t.Fatalf("Owner = %q, %v", got, err)
	}
	// a cannot renew a lease it no longer holds.
	if ok, err := a.Renew(t.Context(), s); err != nil || ok {
		t.Fatalf("a renews b's lease: %v, %v", ok, err)
	}
	if got := acquire(t, a, s); got != "node-b" {
		t.Fatalf("a after takeover: owner %q", got)
	}
}

func TestLeaseRelease(t *testing.T) {
	conn := testNATS(t)
	a := newTestLeases(t, conn(), "node-a", DefaultLeaseTTL)
	b := newTestLeases(t, conn(), "node-b", DefaultLeaseTTL)
	if got := acquire(t, a, "s"); got != "node-a" {
		t.Fatalf("owner %q", got)
	}
	if err := a.Release(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if got := acquire(t, b, "s"); got != "node-b" {
		t.Fatalf("b after release: owner %q, want node-b (no TTL wait)", got)
	}
	// Releasing a lease another node holds leaves it alone.
	if err := a.Release(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Owner(t.Context(), "s"); got != "node-b" {
		t.Fatalf("owner after a's stray release: %q", got)
	}
	if len(a.Held()) != 0 {
		t.Fatalf("a holds %v", a.Held())
	}
}

func TestLeaseConfigErrors(t *testing.T) {
	nc := testNATS(t)()
	tests := []struct {
		name string
		cfg  LeaseConfig
		want error // nil: any error
	}{
		{name: "node id with a dot", cfg: LeaseConfig{NodeID: "a.b"}, want: ErrBadLeaseConfig},
		{name: "node id with a wildcard", cfg: LeaseConfig{NodeID: "*"}, want: ErrBadLeaseConfig},
		{name: "ttl too short", cfg: LeaseConfig{TTL: time.Millisecond}, want: ErrBadLeaseConfig},
		{name: "too many replicas", cfg: LeaseConfig{Replicas: 7}, want: ErrBadLeaseConfig},
		{name: "replicas on a single server", cfg: LeaseConfig{Replicas: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLeases(t.Context(), nc, tc.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := NewLeases(t.Context(), nil, LeaseConfig{}); !errors.Is(err, ErrBadLeaseConfig) {
		t.Fatalf("nil conn: %v", err)
	}
	l, err := NewLeases(t.Context(), nc, LeaseConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !bus.ValidToken(l.Node()) || l.TTL() != DefaultLeaseTTL {
		t.Fatalf("defaults: node %q, ttl %v", l.Node(), l.TTL())
	}
}

// barrierModel answers with text once both hosts' models were asked (or
// after a while, if only one is), so that both session actors drive the
// run at the same time.
type barrierModel struct {
	once  *sync.Once
	both  chan struct{}
	calls *sync.WaitGroup
}

func (m barrierModel) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.calls.Done()
	m.once.Do(func() {
		go func() { m.calls.Wait(); close(m.both) }()
	})
	select {
	case <-m.both:
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &llm.Response{Text: "done"}, nil
}

// Two hosts without leases both act on every command: they are forced to
// drive one session together. The expected version on every append fences
// them: one append wins, the other host reloads and stands down, and the
// stream is one history.
func TestForkRaceFence(t *testing.T) {
	conn := testNATS(t)
	store := memstore.New()
	var calls sync.WaitGroup
	calls.Add(2)
	model := barrierModel{once: &sync.Once{}, both: make(chan struct{}), calls: &calls}
	hosts := make([]*Host, 2)
	for i := range hosts {
		h := newTestHost(t, HostConfig{Conn: conn(), Store: store})
		if err := h.Register(&AgentSpec{Name: "a", Model: model}); err != nil {
			t.Fatal(err)
		}
		hosts[i] = h
	}
	const session = "race"
	done, stop := hosts[0].Watch("r1")
	defer stop()
	done1, stop1 := hosts[1].Watch("r1")
	defer stop1()
	// Both hosts receive the command; the first reply wins (either may
	// be the loser's session_owned).
	_, err := hosts[0].Command(t.Context(), session, VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"})
	if err != nil && !errors.Is(err, ErrSessionOwned) {
		t.Fatal(err)
	}
	var o Outcome
	select {
	case o = <-done:
	case o = <-done1:
	case <-time.After(15 * time.Second):
		t.Fatal("run did not settle")
	}
	if o.Status != StatusCompleted {
		t.Fatalf("status %v", o.Status)
	}
	// Exactly one host still has the session's actor.
	holders := func() int {
		n := 0
		for _, h := range hosts {
			h.mu.Lock()
			if _, ok := h.sessions[session]; ok {
				n++
			}
			h.mu.Unlock()
		}
		return n
	}
	eventually(t, "one host to stand down", func() bool { return holders() == 1 })

	evs, err := store.ReadStream(t.Context(), events.SessionStream(session), 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[events.Type]int{}
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			t.Fatalf("event %d has version %d", i, ev.Version)
		}
		count[ev.Type]++
	}
	for _, typ := range []events.Type{events.TypeRunStarted, events.TypeRunCompleted} {
		if count[typ] != 1 {
			t.Errorf("%d %s events, want 1 (types %v)", count[typ], typ, count)
		}
	}
	st, err := hosts[1].ReadSession(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Run("r1"); r == nil || r.Status != StatusCompleted {
		t.Fatalf("folded run: %+v", r)
	}
}
