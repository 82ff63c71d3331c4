package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
)

// TestStepsFences has the server refuse an event in the middle of a
// pipelined AppendSteps, or see one of its events as a duplicate: what is
// stored is always a prefix of the step at consecutive versions, the
// result says which, and nothing after a refused event is stored.
func TestStepsFences(t *testing.T) {
	cases := []struct {
		name string
		// setup appends what the step then collides with (with store a,
		// or b, another writer of the log) and returns the step.
		setup func(t *testing.T, a, b events.Store) []events.Event
		// stored is how many events of the step must be stored.
		stored int
	}{
		{"an id stored elsewhere in the middle", func(t *testing.T, a, _ events.Store) []events.Event {
			taken := progress(0)
			mustAppend(t, a, "session-one", taken)
			return []events.Event{progress(1), taken, progress(3)}
		}, 1},
		// The first event is a duplicate, so not stored, while the log's
		// last message is that event: the next one's fences (the log's
		// last sequence) must refuse it.
		{"the first event stored elsewhere, last in the log", func(t *testing.T, a, _ events.Store) []events.Event {
			taken := progress(0)
			mustAppend(t, a, "session-one", taken)
			return []events.Event{taken, progress(2)}
		}, 0},
		// The same, with another writer's message after it at the
		// sequence the next event expects: the last message id must
		// refuse it.
		{"the first event stored elsewhere, then another writer", func(t *testing.T, a, b events.Store) []events.Event {
			taken := progress(0)
			mustAppend(t, a, "session-one", taken)
			mustAppend(t, b, "session-three", progress(9))
			return []events.Event{taken, progress(2)}
		}, 0},
		// Another writer of the log makes the store's last sequence
		// stale: the step is stored whole all the same.
		{"another writer of the log before the step", func(t *testing.T, a, b events.Store) []events.Event {
			mustAppend(t, a, "session-one", progress(0))
			mustAppend(t, b, "session-three", progress(9))
			return []events.Event{progress(1), progress(2), progress(3)}
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			srv := startServer(t, bus.SyncPeriodic, "")
			a, b := newStore(t, connect(t, srv)), newStore(t, connect(t, srv))
			step := tc.setup(t, a, b)
			res, err := a.AppendSteps(ctx, "session-two", events.NoStream, step...)
			if (err == nil) != (tc.stored == len(step)) {
				t.Fatalf("AppendSteps = %+v, %v; want %d of %d events stored", res, err, tc.stored, len(step))
			}
			if err != nil && !errors.Is(err, events.ErrInvalidEvent) {
				t.Errorf("AppendSteps: %v, want ErrInvalidEvent", err)
			}
			if got := int(res.LastVersion); got != tc.stored || (tc.stored > 0 && res.FirstVersion != 1) {
				t.Errorf("AppendSteps result %+v, want versions 1..%d", res, tc.stored)
			}
			got, rerr := a.ReadStream(ctx, "session-two", 0)
			if tc.stored == 0 {
				if !errors.Is(rerr, events.ErrStreamNotFound) {
					t.Fatalf("ReadStream: %d events, %v; want none stored", len(got), rerr)
				}
				return
			}
			if rerr != nil {
				t.Fatal(rerr)
			}
			var want []uuid.UUID
			for _, ev := range step[:tc.stored] {
				want = append(want, ev.ID)
			}
			var ids []uuid.UUID
			for _, ev := range got {
				ids = append(ids, ev.ID)
			}
			if diff := cmp.Diff(want, ids); diff != "" {
				t.Errorf("stored events (-the step's prefix +stored):\n%s", diff)
			}
			if err := events.VerifyChain(got); err != nil {
				t.Error(err)
			}
			if diff := cmp.Diff(events.StoredHashes(got), res.Hashes); diff != "" {
				t.Errorf("Hashes (-stored +returned):\n%s", diff)
			}
		})
	}
}

func mustAppend(t *testing.T, s events.Store, stream string, evs ...events.Event) {
	t.Helper()
	if _, err := s.Append(t.Context(), stream, events.Any, evs...); err != nil {
		t.Fatal(err)
	}
}

// TestLostAcknowledgementEnds: an append under a context without a
// deadline whose acknowledgement never comes (the log's stream is gone
// and a plain subscriber takes its subjects without answering) fails
// instead of waiting for ever.
func TestLostAcknowledgementEnds(t *testing.T) {
	srv := startServer(t, bus.SyncPeriodic, "")
	nc := connect(t, srv)
	s := newStore(t, nc)
	ctx := context.Background() // no deadline: the store bounds the wait
	mustAppend(t, s, "session-s", progress(1))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(t.Context(), jsstore.DefaultStreamName); err != nil {
		t.Fatal(err)
	}
	sink, err := nc.SubscribeSync(bus.Default.AllLogIngest())
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Unsubscribe()
	for _, n := range []int{1, 3} {
		done := make(chan error, 1)
		go func() {
			evs := make([]events.Event, n)
			for i := range evs {
				evs[i] = progress(10 + i)
			}
			_, err := s.AppendSteps(ctx, "session-s", events.Exact(1), evs...)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("AppendSteps of %d with no acknowledgement succeeded", n)
			}
		case <-time.After(time.Minute):
			t.Fatalf("AppendSteps of %d with no acknowledgement did not return", n)
		}
	}
}
