package actors

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
)

// textHost is a host on store whose agent "a" answers "done".
func textHost(t *testing.T, conn func() *nats.Conn, store events.Store) *Host {
	t.Helper()
	return modelHost(t, conn, store, llm.AlwaysText("done"))
}

// modelHost is a host on store whose agent "a" has model and no tools.
func modelHost(t *testing.T, conn func() *nats.Conn, store events.Store, model llm.Model) *Host {
	t.Helper()
	h := newTestHost(t, HostConfig{Conn: conn(), Store: store})
	if err := h.Register(&AgentSpec{Name: "a", Model: model}); err != nil {
		t.Fatal(err)
	}
	return h
}

// The first start of a session its caller made just now (StartNew) runs
// without reading the session's stream; a start through Command reads it.
func TestStartNewReadsNoStream(t *testing.T) {
	conn := testNATS(t)
	store := &flakyStore{Store: memstore.New()}
	h := textHost(t, conn, store)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.StartNew(t.Context(), "fresh", StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusCompleted || o.Output != "done" {
		t.Fatalf("outcome %s %q (%v)", o.Status, o.Output, o.Error)
	}
	if reads, appends := store.counts(); reads != 0 || appends == 0 {
		t.Fatalf("a new session's run read its stream %d times (appends %d); want none", reads, appends)
	}
	outcomes2, stop2 := h.Watch("r2")
	defer stop2()
	if _, err := h.Command(t.Context(), "other", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitOutcome(t, outcomes2)
	if reads, _ := store.counts(); reads != 1 {
		t.Fatalf("a start through Command read the stream %d times; want 1", reads)
	}
}

// A StartNew that claims a session with events (another process wrote it)
// is refused by the store's fence: the session's events stay as they
// were, chained, and the caller gets a typed error it retries on.
func TestStartNewOfASessionWithEventsIsRefused(t *testing.T) {
	conn := testNATS(t)
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New(memstore.WithChainKeys(keys))
	first, second := textHost(t, conn, store), textHost(t, conn, store)
	outcomes, stop := first.Watch("r1")
	defer stop()
	if _, err := first.Command(t.Context(), "s", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitOutcome(t, outcomes)
	before, err := store.ReadStream(t.Context(), events.SessionStream("s"), 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = second.StartNew(t.Context(), "s", StartCommand{RunID: "r2", Agent: "a", Prompt: "again"})
	if !errors.Is(err, ErrSessionOwned) {
		t.Fatalf("StartNew of a session with events: %v; want ErrSessionOwned", err)
	}
	after, err := store.ReadStream(t.Context(), events.SessionStream("s"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("the session has %d events after the refused start, %d before", len(after), len(before))
	}
	if err := events.VerifyChain(after); err != nil {
		t.Fatalf("chain: %v", err)
	}
}
