package actors

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
)

// liveSessions returns how many session actors the host holds.
func liveSessions(h *Host) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// waitOutcome waits for the outcome of a run on ch.
func waitOutcome(t testing.TB, ch <-chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(15 * time.Second):
		t.Fatal("run did not settle")
		return Outcome{}
	}
}

// A settled session's actor stops once idle for SessionIdle and the host
// forgets it; the session's next command rebuilds it from the log and
// carries on after what the log holds (its version goes on, no event is
// lost or repeated). A session with a run running is not released.
func TestSettledSessionIsReleasedAndRebuilt(t *testing.T) {
	conn := testNATS(t)
	store := &flakyStore{Store: memstore.New()}
	h := newTestHost(t, HostConfig{Conn: conn(), Store: store, SessionIdle: 20 * time.Millisecond})
	release := make(chan struct{})
	if err := h.Register(&AgentSpec{Name: "a", Model: llm.AlwaysText("done")}); err != nil {
		t.Fatal(err)
	}
	blocking := llm.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		r := llm.ScriptText("done")
		return &r, nil
	})
	if err := h.Register(&AgentSpec{Name: "slow", Model: blocking}); err != nil {
		t.Fatal(err)
	}

	first, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "one"}); err != nil {
		t.Fatal(err)
	}
	o1 := waitOutcome(t, first)
	deadline := time.Now().Add(10 * time.Second)
	for liveSessions(h) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the settled session's actor was never released")
		}
		time.Sleep(5 * time.Millisecond)
	}
	reads, _ := store.counts()

	second, stop2 := h.Watch("r2")
	defer stop2()
	reply, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Version != o1.Version+1 {
		t.Fatalf("the rebuilt session appended run.started at version %d, want %d", reply.Version, o1.Version+1)
	}
	if o2 := waitOutcome(t, second); o2.Status != StatusCompleted {
		t.Fatalf("second run %s (%v)", o2.Status, o2.Error)
	}
	if again, _ := store.counts(); again != reads+1 {
		t.Fatalf("%d stream reads after the release, want 1 (the rebuild)", again-reads)
	}

	// A running run keeps its session in memory however long it runs.
	if _, err := h.Command(t.Context(), "s2", VerbStart, StartCommand{RunID: "r3", Agent: "slow", Prompt: "wait"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // five idle periods
	h.mu.Lock()
	_, held := h.sessions["s2"]
	h.mu.Unlock()
	close(release)
	if !held {
		t.Fatal("the actor of a session with a running run was released")
	}
}

// holdCompletion is a store that holds the append of run.completed until
// release is closed, telling held when it arrived.
type holdCompletion struct {
	events.Store
	held, release chan struct{}
}

func (s *holdCompletion) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	for _, ev := range evs {
		if ev.Type == events.TypeRunCompleted {
			close(s.held)
			<-s.release
		}
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// A command already in the mailbox of an actor that releases itself (it
// came after the idle timer's message) is handed to the session's next
// actor and carried out there, exactly once.
func TestCommandRacingReleaseIsCarriedOut(t *testing.T) {
	conn := testNATS(t)
	store := &holdCompletion{Store: memstore.New(), held: make(chan struct{}), release: make(chan struct{})}
	h := newTestHost(t, HostConfig{Conn: conn(), Store: store, SessionIdle: time.Millisecond})
	if err := h.Register(&AgentSpec{Name: "a", Model: llm.AlwaysText("done")}); err != nil {
		t.Fatal(err)
	}
	first, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "one"}); err != nil {
		t.Fatal(err)
	}
	<-store.held // the actor is in its last append of r1
	ref, err := h.session("s")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // longer than the idle period
	// Behind the append in the mailbox: the idle timer's message, then a
	// command. The actor releases itself on the first, and must pass the
	// second on.
	h.system.Root.Send(ref.pid, &idleCheck{})
	replies := make(chan CommandReply, 1)
	second, stop2 := h.Watch("r2")
	defer stop2()
	if err := h.sendCommand("s", &command{verb: VerbStart, body: StartCommand{RunID: "r2", Agent: "a", Prompt: "two"},
		reply: func(r CommandReply) { replies <- r }}, false); err != nil {
		t.Fatal(err)
	}
	store.held = make(chan struct{}) // r2's completion is held too: let it through
	close(store.release)
	if o := waitOutcome(t, first); o.Status != StatusCompleted {
		t.Fatalf("first run %s", o.Status)
	}
	select {
	case r := <-replies:
		if r.Error != nil {
			t.Fatalf("the command behind the release was refused: %v", r.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command behind the release was never answered")
	}
	if o := waitOutcome(t, second); o.Status != StatusCompleted {
		t.Fatalf("second run %s", o.Status)
	}
	evs, err := store.Store.ReadStream(t.Context(), events.SessionStream("s"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, ev := range evs {
		if ev.Type == events.TypeRunStarted {
			started = append(started, ev.RunID)
		}
	}
	if diff := cmp.Diff([]string{"r1", "r2"}, started); diff != "" {
		t.Fatalf("runs started (-want +got):\n%s", diff)
	}
}

// ctxStore remembers the context of the last stream read.
type ctxStore struct {
	events.Store
	mu   sync.Mutex
	last context.Context
}

func (s *ctxStore) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	s.mu.Lock()
	s.last = ctx
	s.mu.Unlock()
	return s.Store.ReadStream(ctx, stream, from)
}

// A passivated session actor releases its store deadline when it stops:
// the context its load ran under is cancelled, so its timer does not
// outlive the actor (it kept every released session's context and timer
// for 30 s, which TestHeapFlat saw as ~300 B a run on a fast machine).
func TestPassivatedSessionReleasesItsStoreContext(t *testing.T) {
	conn := testNATS(t)
	store := &ctxStore{Store: memstore.New()}
	h := newTestHost(t, HostConfig{Conn: conn(), Store: store, SessionIdle: 20 * time.Millisecond})
	if err := h.Register(&AgentSpec{Name: "a", Model: llm.AlwaysText("done")}); err != nil {
		t.Fatal(err)
	}
	ch, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "one"}); err != nil {
		t.Fatal(err)
	}
	waitOutcome(t, ch)
	store.mu.Lock()
	ctx := store.last
	store.mu.Unlock()
	if ctx == nil {
		t.Fatal("the session never read its stream")
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveSessions(h) != 0 || ctx.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("live sessions %d, store context %v: the passivated actor kept its store deadline", liveSessions(h), ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("store context ended with %v, want it cancelled by the stop", ctx.Err())
	}
}
