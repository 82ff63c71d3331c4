package actors

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/events/storetest"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// countingStore counts the reads of the whole log (through all, the
// store it wraps) and of each stream.
type countingStore struct {
	events.Store
	all *storetest.ReadCounter
	// dead makes every append fail: the node crashed (the log is shared
	// in memory, so a closed connection does not stop a node's writes).
	dead atomic.Bool

	mu    sync.Mutex
	reads map[string]int // stream → ReadStream calls
}

func (s *countingStore) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	s.mu.Lock()
	s.reads[stream]++
	s.mu.Unlock()
	return s.Store.ReadStream(ctx, stream, from)
}

func (s *countingStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if s.dead.Load() {
		return events.AppendResult{}, errors.New("the node crashed")
	}
	return s.Store.Append(ctx, stream, expected, evs...)
}

func (s *countingStore) streamReads(stream string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[stream]
}

// workModel calls the work tool, then answers "done" once it sees the
// tool's return: any node carries the run on from the stream.
func workModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		msgs := req.Messages
		if n := len(msgs); n > 0 && len(msgs[n-1].ToolReturns()) > 0 {
			return &llm.Response{Text: "done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "w1", Name: "work", Arguments: json.RawMessage(`{}`)}}}, nil
	})
}

// takeoverNode is one node of a test cluster: a host with leases on its
// own connection, over a log shared by every node.
type takeoverNode struct {
	name    string
	nc      *nats.Conn
	h       *Host
	store   *countingStore
	calls   atomic.Int32  // calls of the work tool on this node
	started chan struct{} // closed when the node's work tool is first called
	taken   chan string   // the sessions the node's watcher took over
}

type nodeOptions struct {
	ttl     time.Duration
	markers bool // the lease bucket has limit markers
	block   bool // the node's work tool blocks until cancelled
	watch   bool // run WatchLeases
}

func newTakeoverNode(t *testing.T, conn func() *nats.Conn, log events.Store, name string, o nodeOptions) *takeoverNode {
	t.Helper()
	all := &storetest.ReadCounter{Store: log}
	n := &takeoverNode{name: name, nc: conn(), store: &countingStore{Store: all, all: all, reads: map[string]int{}},
		started: make(chan struct{}), taken: make(chan string, 16)}
	js, err := jetstream.New(n.nc)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := openLeases(t.Context(), js, LeaseConfig{NodeID: name, Bucket: DefaultLeaseBucket, TTL: o.ttl, Replicas: 1}, o.markers)
	if err != nil {
		t.Fatal(err)
	}
	if leases.markers != o.markers {
		t.Fatalf("lease bucket markers %v, want %v", leases.markers, o.markers)
	}
	n.h = newTestHost(t, HostConfig{Conn: n.nc, Store: n.store, PublishEvents: true, Leases: leases})
	var first atomic.Bool
	work, err := toolsets.NewContextFunc("work", func(ctx context.Context, _ *toolsets.ToolContext, _ struct{}) (string, error) {
		n.calls.Add(1)
		if first.CompareAndSwap(false, true) {
			close(n.started)
		}
		if o.block {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "worked on " + name, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Agent a calls the work tool; agent approve waits for its approval.
	for _, spec := range []*AgentSpec{
		{Name: "a", Model: workModel(), Tools: []toolsets.Tool{work}},
		{Name: "approve", Model: workModel(), Tools: []toolsets.Tool{work}, ApprovalRequired: []string{"work"}},
	} {
		if err := n.h.Register(spec); err != nil {
			t.Fatal(err)
		}
	}
	if o.watch {
		ctx, cancel := context.WithCancel(t.Context())
		ended := make(chan error, 1)
		go func() { ended <- n.h.WatchLeases(ctx, func(id string) { n.taken <- id }) }()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-ended:
				if err != nil {
					t.Errorf("%s: WatchLeases: %v", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("%s: WatchLeases did not return", name)
			}
		})
	}
	return n
}

// startBlockedRun starts run r1 of session on node n (the only node
// serving commands yet) and returns once its work tool is running.
func startBlockedRun(t *testing.T, n *takeoverNode, session string) {
	t.Helper()
	if _, err := n.h.Command(t.Context(), session, VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.started:
	case <-time.After(15 * time.Second):
		t.Fatal("the work tool never started")
	}
}

// awaitCompleted waits until one of the watches hears run r1 complete.
func awaitCompleted(t *testing.T, watches ...<-chan Outcome) Outcome {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		var o Outcome
		select {
		case o = <-first(watches, 0):
		case o = <-first(watches, 1):
		case <-deadline:
			t.Fatal("the run did not complete on another node")
		}
		if o.Status.Ended() {
			if o.Status != StatusCompleted || o.Output != "done" {
				t.Fatalf("run ended %v with %q", o.Status, o.Output)
			}
			return o
		}
	}
}

// first returns chs[i], or nil (a channel that never delivers).
func first[T any](chs []<-chan T, i int) <-chan T {
	if i < len(chs) {
		return chs[i]
	}
	return nil
}

// checkOneHistory checks that session's stream is one history (versions
// 1..n) in which the run started, called its tool and completed once.
func checkOneHistory(t *testing.T, log events.Store, session string) {
	t.Helper()
	evs, err := log.ReadStream(t.Context(), events.SessionStream(session), 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[events.Type]int{}
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			t.Fatalf("event %d (%s) has version %d", i, ev.Type, ev.Version)
		}
		count[ev.Type]++
	}
	got := map[events.Type]int{}
	for _, typ := range []events.Type{events.TypeRunStarted, events.TypeToolReturned, events.TypeRunCompleted} {
		got[typ] = count[typ]
	}
	want := map[events.Type]int{events.TypeRunStarted: 1, events.TypeToolReturned: 1, events.TypeRunCompleted: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event counts (-want +got):\n%s\nall: %v", diff, count)
	}
}

// awaitTakeovers waits until the watchers have reported n takeovers, then
// returns those and whatever else they hold now. A watcher reports a
// takeover once carryOn has returned, which may be after the run it
// carried on completed.
func awaitTakeovers(t *testing.T, n int, taken ...chan string) []string {
	t.Helper()
	recv := make([]<-chan string, len(taken))
	for i, ch := range taken {
		recv[i] = ch
	}
	var got []string
	deadline := time.After(15 * time.Second)
	for len(got) < n {
		select {
		case s := <-first(recv, 0):
			got = append(got, s)
		case s := <-first(recv, 1):
			got = append(got, s)
		case <-deadline:
			t.Fatalf("the watchers reported %v, want %d takeovers", got, n)
		}
	}
	for _, ch := range taken {
		got = append(got, drain(ch)...)
	}
	return got
}

// checkTakenOver checks that node b's watcher took session over (and no
// other), reading that session's stream only, never the whole log, and
// that the stream is one history.
func checkTakenOver(t *testing.T, b *takeoverNode, log events.Store, session string) {
	t.Helper()
	if diff := cmp.Diff([]string{session}, awaitTakeovers(t, 1, b.taken)); diff != "" {
		t.Errorf("B's takeovers (-want +got):\n%s", diff)
	}
	if n := b.store.all.Reads(); n != 0 {
		t.Errorf("B read the whole log %d times", n)
	}
	checkOneHistory(t, log, session)
}

// drain returns what ch holds now.
func drain(ch chan string) []string {
	var out []string
	for {
		select {
		case s := <-ch:
			out = append(out, s)
		default:
			return out
		}
	}
}

// Node A drives a run whose tool blocks and dies without releasing its
// lease. Node B, which only watches the leases (no Recover after it
// started), takes the session over once A's lease expires, reading only
// that session's stream, and completes the run: with the server's expiry
// markers, and with the watcher's own timers on a bucket without them.
func TestTakeoverAfterNodeDies(t *testing.T) {
	tests := []struct {
		name    string
		markers bool
	}{
		{name: "expiry markers", markers: true},
		{name: "local timers", markers: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := testNATS(t)
			log := memstore.New()
			const session = "dies"
			o := nodeOptions{ttl: 400 * time.Millisecond, markers: tc.markers}
			a := newTakeoverNode(t, conn, log, "node-a", nodeOptions{ttl: o.ttl, markers: o.markers, block: true})
			startBlockedRun(t, a, session)
			b := newTakeoverNode(t, conn, log, "node-b", nodeOptions{ttl: o.ttl, markers: o.markers, watch: true})
			done, stop := b.h.Watch("r1")
			defer stop()

			// A crash: the connection drops, the lease is neither renewed
			// nor released.
			a.store.dead.Store(true)
			a.nc.Close()
			_ = a.h.Close()

			awaitCompleted(t, done)
			if owner, err := b.h.cfg.Leases.Owner(t.Context(), session); err != nil || owner != "node-b" {
				t.Errorf("owner after the takeover = %q, %v", owner, err)
			}
			if got := b.calls.Load(); got != 1 {
				t.Errorf("B called the tool %d times, want 1", got)
			}
			checkTakenOver(t, b, log, session)
		})
	}
}

// Node A stops cleanly while its run's tool is running: it releases the
// lease, and node B takes the session over at once. The lease TTL is
// longer than the test's deadline, so only the release can hand it over.
func TestTakeoverAfterCleanRelease(t *testing.T) {
	conn := testNATS(t)
	log := memstore.New()
	const session = "released"
	const ttl = 5 * time.Minute
	a := newTakeoverNode(t, conn, log, "node-a", nodeOptions{ttl: ttl, markers: true, block: true})
	startBlockedRun(t, a, session)
	b := newTakeoverNode(t, conn, log, "node-b", nodeOptions{ttl: ttl, markers: true, watch: true})
	done, stop := b.h.Watch("r1")
	defer stop()

	if err := a.h.Close(); err != nil {
		t.Fatal(err)
	}
	awaitCompleted(t, done)
	checkTakenOver(t, b, log, session)
}

// Two watching nodes see the same lease expire: exactly one takes the
// session over, calls the tool and completes the run; the stream stays
// one history.
func TestTakeoverRace(t *testing.T) {
	conn := testNATS(t)
	log := memstore.New()
	const session = "raced"
	o := nodeOptions{ttl: 400 * time.Millisecond, markers: true}
	a := newTakeoverNode(t, conn, log, "node-a", nodeOptions{ttl: o.ttl, markers: true, block: true})
	startBlockedRun(t, a, session)
	o.watch = true
	b := newTakeoverNode(t, conn, log, "node-b", o)
	c := newTakeoverNode(t, conn, log, "node-c", o)
	doneB, stopB := b.h.Watch("r1")
	defer stopB()
	doneC, stopC := c.h.Watch("r1")
	defer stopC()

	a.store.dead.Store(true)
	a.nc.Close()
	_ = a.h.Close()

	awaitCompleted(t, doneB, doneC)
	takeovers := awaitTakeovers(t, 1, b.taken, c.taken)
	if diff := cmp.Diff([]string{session}, takeovers); diff != "" {
		t.Errorf("takeovers of B and C (-want +got):\n%s", diff)
	}
	if got := b.calls.Load() + c.calls.Load(); got != 1 {
		t.Errorf("B and C called the tool %d times, want 1", got)
	}
	if b.h.Drives(session) == c.h.Drives(session) {
		t.Errorf("B drives the session: %v, C: %v; want exactly one", b.h.Drives(session), c.h.Drives(session))
	}
	checkOneHistory(t, log, session)
}

// A waiting session whose owner dies is not taken over by the watcher
// (the next command takes it); a running one of the same node is.
func TestTakeoverLeavesWaitingSessions(t *testing.T) {
	conn := testNATS(t)
	log := memstore.New()
	o := nodeOptions{ttl: 400 * time.Millisecond, markers: true}
	a := newTakeoverNode(t, conn, log, "node-a", nodeOptions{ttl: o.ttl, markers: true, block: true})
	wdone, wstop := a.h.Watch("rw")
	defer wstop()
	if _, err := a.h.Command(t.Context(), "waits", VerbStart, StartCommand{RunID: "rw", Agent: "approve", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-wdone:
		if o.Status != StatusWaiting {
			t.Fatalf("run settled %v, want waiting", o.Status)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not settle")
	}
	startBlockedRun(t, a, "runs")
	o.watch = true
	b := newTakeoverNode(t, conn, log, "node-b", o)
	done, stop := b.h.Watch("r1")
	defer stop()

	a.store.dead.Store(true)
	a.nc.Close()
	_ = a.h.Close()

	awaitCompleted(t, done)
	eventually(t, "B to look at the waiting session", func() bool { return b.store.streamReads(events.SessionStream("waits")) > 0 })
	if diff := cmp.Diff([]string{"runs"}, awaitTakeovers(t, 1, b.taken)); diff != "" {
		t.Errorf("B's takeovers (-want +got):\n%s", diff)
	}
	if b.h.Drives("waits") {
		t.Error("B drives the waiting session")
	}
	if owner, err := b.h.cfg.Leases.Owner(t.Context(), "waits"); err != nil || owner != "" {
		t.Errorf("the waiting session's lease is held by %q (%v), want nobody", owner, err)
	}
}

func TestWatchLeasesNeedsLeases(t *testing.T) {
	h := newTestHost(t, HostConfig{Conn: testNATS(t)(), Store: memstore.New()})
	if err := h.WatchLeases(t.Context(), nil); !errors.Is(err, ErrNoLeases) {
		t.Fatalf("WatchLeases = %v, want ErrNoLeases", err)
	}
}

func TestStillRunning(t *testing.T) {
	tests := []struct {
		name  string
		types []events.Type
		want  bool
	}{
		{name: "no run", types: []events.Type{events.TypeModelRequest}, want: false},
		{name: "started", types: []events.Type{events.TypeRunStarted, events.TypeModelRequest, events.TypeToolRequested}, want: true},
		{name: "waiting", types: []events.Type{events.TypeRunStarted, events.TypeRunWaiting}, want: false},
		{name: "resumed", types: []events.Type{events.TypeRunStarted, events.TypeRunWaiting, events.TypeRunResumed, events.TypeToolReturned}, want: true},
		{name: "completed", types: []events.Type{events.TypeRunStarted, events.TypeRunCompleted}, want: false},
		{name: "failed", types: []events.Type{events.TypeRunStarted, events.TypeRunFailed}, want: false},
		{name: "cancelled", types: []events.Type{events.TypeRunStarted, events.TypeRunWaiting, events.TypeRunCancelled}, want: false},
		{name: "a second run", types: []events.Type{events.TypeRunStarted, events.TypeRunCompleted, events.TypeRunStarted}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := false
			for _, typ := range tc.types {
				got = stillRunning(got, typ)
			}
			if got != tc.want {
				t.Fatalf("stillRunning over %v = %v, want %v", tc.types, got, tc.want)
			}
		})
	}
}
