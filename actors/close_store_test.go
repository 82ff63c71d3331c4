package actors

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// stuckStore is a store that cannot answer (its connection is down, its
// server gone): once stuck, its appends (or, with reads, its reads too)
// wait for their context's end, telling entered as they begin.
type stuckStore struct {
	events.Store
	reads   bool
	stuck   atomic.Bool
	entered chan string // the stream of each call that began waiting
}

func (s *stuckStore) wait(ctx context.Context, stream string) error {
	select {
	case s.entered <- stream:
	default: // a call after the test's: nobody waits for it
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *stuckStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if s.stuck.Load() {
		return events.AppendResult{}, s.wait(ctx, stream)
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

func (s *stuckStore) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	if s.reads && s.stuck.Load() {
		return nil, s.wait(ctx, stream)
	}
	return s.Store.ReadStream(ctx, stream, from)
}

// stuckCloseBound is how long Close of a host whose session actors are
// each in a store call that cannot end may take in this test: generous (a
// loaded machine, -race), and still far below the 10 s that Close once
// waited for each of them in turn.
const stuckCloseBound = 5 * time.Second

// A host whose session actors are each in a store call the store cannot
// answer closes without waiting those calls out one after another: it
// stops the actors together and, past a grace period, ends their calls.
func TestCloseWithStoreCallsStuck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reads bool
	}{
		{name: "appends"},            // the start's first append waits
		{name: "reads", reads: true}, // the actor's load waits
	} {
		t.Run(tc.name, func(t *testing.T) {
			const sessions = 3
			store := &stuckStore{Store: memstore.New(), reads: tc.reads, entered: make(chan string, sessions)}
			h := textHost(t, testNATS(t), store)
			store.stuck.Store(true)
			for i := range sessions {
				go func() {
					// Answered by the host's close at the latest.
					_, _ = h.Command(t.Context(), fmt.Sprintf("s%d", i), VerbStart,
						StartCommand{RunID: fmt.Sprintf("r%d", i), Agent: "a", Prompt: "hi"})
				}()
			}
			for range sessions {
				select {
				case <-store.entered:
				case <-time.After(15 * time.Second):
					t.Fatal("the sessions' store calls did not begin")
				}
			}
			closeWithinBound(t, h, stuckCloseBound)
		})
	}
}
