package actors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/toolsets"
)

// A run is cancelled while the pool stream's acknowledgement of its
// pooled call is under way: the scheduler stops before the
// acknowledgement reaches it, and the call must not stay queued for a
// worker to run later. The cancel comes before the publishing goroutine
// settles the publish (the goroutine deletes the message), and after (the
// scheduler does).
func TestPoolCallCancelledWhilePublishing(t *testing.T) {
	for _, settled := range []bool{false, true} {
		name := "before the publish settles"
		if settled {
			name = "after the publish settled"
		}
		t.Run(name, func(t *testing.T) { testPoolCallCancelledWhilePublishing(t, settled) })
	}
}

func testPoolCallCancelledWhilePublishing(t *testing.T, settled bool) {
	h, st := pooledHost(t)
	stored, release := make(chan struct{}), make(chan struct{})
	h.poolStored = func(at bool) {
		if at == settled {
			close(stored)
			<-release
		}
	}
	done, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stored:
	case <-time.After(15 * time.Second):
		t.Fatal("the pooled call was never stored")
	}
	if _, err := h.Command(t.Context(), "s", VerbCancel, CancelCommand{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for ended := false; !ended; {
		select {
		case o := <-done:
			if ended = o.Status.Ended(); ended && o.Status != StatusCancelled {
				t.Fatalf("run ended %v, want cancelled", o.Status)
			}
		case <-deadline:
			t.Fatal("the run was not cancelled")
		}
	}
	close(release)

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cancelled call stays queued: %d messages in %s", info.State.Msgs, WorkerQueueStream(bus.Default))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lostAckJS stores the first publish but reports it as failed (its
// acknowledgement lost, as in a leader election), then publishes normally.
type lostAckJS struct {
	jetstream.JetStream
	publishes atomic.Int32
}

func (l *lostAckJS) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := l.JetStream.PublishMsg(ctx, msg, opts...)
	if l.publishes.Add(1) == 1 && err == nil {
		return nil, context.DeadlineExceeded
	}
	return ack, err
}

// A pooled call whose publish the stream stored but whose acknowledgement
// was lost is published again under the same message id: the stream keeps
// one copy, so the call runs once.
func TestPoolPublishTriedAgainIsStoredOnce(t *testing.T) {
	h, st := pooledHost(t)
	lost := &lostAckJS{JetStream: h.js}
	h.js = lost
	if _, err := h.Command(t.Context(), "s", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the publish to be tried again", func() bool { return lost.publishes.Load() >= 2 })
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("the pool stream holds %d copies of the call, want 1", info.State.Msgs)
	}
}

// pooledHost starts a host on a fresh NATS server whose agent "a" calls
// the tool work, served by the workers of pool "p" (none run: calls stay
// in the pool stream, which it returns).
func pooledHost(t *testing.T) (*Host, jetstream.Stream) {
	t.Helper()
	nc := testNATS(t)()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(t.Context(), WorkerQueueStreamConfig(bus.Default, 1))
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, HostConfig{Conn: nc, Store: memstore.New(), PublishEvents: true})
	work, err := toolsets.NewFunc("work", func(context.Context, struct{}) (string, error) { return "ran locally", nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Register(&AgentSpec{Name: "a", Model: workModel(), Tools: []toolsets.Tool{work}}); err != nil {
		t.Fatal(err)
	}
	if err := h.AddPooledTools("p", "work"); err != nil {
		t.Fatal(err)
	}
	return h, st
}
