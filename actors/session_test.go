package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// flakyStore is a store whose first failReads ReadStream calls fail, as
// JetStream does while its server restarts. It counts appends.
type flakyStore struct {
	events.Store
	mu        sync.Mutex
	failReads int
	reads     int
	appends   int
}

var errFlaky = errors.New("test: jetstream temporarily unavailable")

func (s *flakyStore) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	s.mu.Lock()
	s.reads++
	fail := s.reads <= s.failReads
	s.mu.Unlock()
	if fail {
		return nil, errFlaky
	}
	return s.Store.ReadStream(ctx, stream, from)
}

func (s *flakyStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	s.mu.Lock()
	s.appends++
	s.mu.Unlock()
	return s.Store.Append(ctx, stream, exp, evs...)
}

func (s *flakyStore) counts() (reads, appends int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads, s.appends
}

// A session actor whose first reads of its stream fail refuses commands
// with unavailable (appending nothing) and loads again on the next one:
// once the store answers, the command is carried out and the run completes.
func TestSessionLoadFailureIsRetried(t *testing.T) {
	tests := []struct {
		name      string
		failReads int // reads that fail: the actor's start, then one per command
		refusals  int // commands refused with unavailable
	}{
		{name: "start read fails, first command reads", failReads: 1, refusals: 0},
		{name: "start and first command reads fail", failReads: 2, refusals: 1},
		{name: "start and two command reads fail", failReads: 3, refusals: 2},
	}
	conn := testNATS(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &flakyStore{Store: memstore.New(), failReads: tc.failReads}
			h := textHost(t, conn, store)
			const session, run = "s1", "r1"
			start := StartCommand{RunID: run, Agent: "a", Prompt: "hi"}
			for i := range tc.refusals {
				_, err := h.Command(t.Context(), session, VerbStart, start)
				var ce *CommandError
				if !errors.As(err, &ce) || ce.Code != "unavailable" || !errors.Is(err, ErrUnavailable) {
					t.Fatalf("command %d: error %v, want code unavailable", i+1, err)
				}
				if !errors.Is(err, ErrInternal) {
					t.Fatalf("command %d: %v does not match ErrInternal", i+1, err)
				}
				if _, appends := store.counts(); appends != 0 {
					t.Fatalf("command %d: %d appends while the state is not loaded", i+1, appends)
				}
			}
			if _, err := store.Store.ReadStream(t.Context(), events.SessionStream(session), 0); !errors.Is(err, events.ErrStreamNotFound) {
				t.Fatalf("stream after the refusals: %v, want not found", err)
			}
			outcomes, stop := h.Watch(run)
			defer stop()
			reply, err := h.Command(t.Context(), session, VerbStart, start)
			if err != nil {
				t.Fatalf("command after the store came back: %v", err)
			}
			if reply.RunID != run {
				t.Fatalf("reply run %q", reply.RunID)
			}
			select {
			case o := <-outcomes:
				if o.Status != StatusCompleted || o.Output != "done" {
					t.Fatalf("outcome %s %q (%v)", o.Status, o.Output, o.Error)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("run did not settle")
			}
			if reads, _ := store.counts(); reads != tc.failReads+1 {
				t.Fatalf("%d reads, want %d (one per refused command, then one that succeeded)", reads, tc.failReads+1)
			}
			evs, err := store.Store.ReadStream(t.Context(), events.SessionStream(session), 0)
			if err != nil {
				t.Fatal(err)
			}
			var runStarts []uint64
			for _, ev := range evs {
				if ev.Type == events.TypeRunStarted {
					runStarts = append(runStarts, ev.Version)
				}
			}
			if diff := cmp.Diff([]uint64{1}, runStarts); diff != "" {
				t.Fatalf("run.started versions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeaseSentinel(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{name: "timeout", err: fmt.Errorf("read lease of %q: %w", "s", context.DeadlineExceeded), want: ErrUnavailable},
		{name: "nats timeout", err: fmt.Errorf("read lease: %w", nats.ErrTimeout), want: ErrUnavailable},
		{name: "no responders", err: fmt.Errorf("read lease: %w", nats.ErrNoResponders), want: ErrUnavailable},
		{name: "reconnecting", err: fmt.Errorf("acquire lease: %w", nats.ErrConnectionReconnecting), want: ErrUnavailable},
		{name: "jetstream not enabled", err: fmt.Errorf("acquire lease: %w", jetstream.ErrJetStreamNotEnabled), want: ErrUnavailable},
		{name: "jetstream 503", err: fmt.Errorf("acquire lease: %w", &jetstream.APIError{Code: 503, Description: "JetStream system temporarily unavailable"}), want: ErrUnavailable},
		{name: "bad value", err: errors.New(`lease of "s": bad value "x"`), want: ErrInternal},
		{name: "bad request", err: fmt.Errorf("acquire lease: %w", jetstream.ErrBadRequest), want: ErrInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := leaseSentinel(tc.err); got != tc.want {
				t.Fatalf("leaseSentinel(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
