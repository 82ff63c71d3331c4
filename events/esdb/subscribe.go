package esdb

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/weft-run/weft/events"
)

// Subscribe implements events.Subscriber with an EventStoreDB catch-up
// subscription to $all from after (exclusive). It ends with ctx.Err() when
// ctx is done, with an error matching events.ErrClosed when the store is
// closed, and with the client's error when the server drops the
// subscription.
func (s *Store) Subscribe(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	const op = "subscribe"
	return func(yield func(events.Event, error) bool) {
		if s.closed() {
			yield(events.Event{}, &events.Error{Op: op, Err: events.ErrClosed})
			return
		}
		// The subscription lives until the caller's context is done or the
		// store is closed.
		subCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.life, cancel)
		defer stop()

		// end reports why the subscription ended: the store closed, the
		// caller's context, or err.
		end := func(err error) error {
			switch {
			case s.closed():
				return &events.Error{Op: op, Err: events.ErrClosed}
			case ctx.Err() != nil:
				return ctx.Err()
			}
			return s.readAllError(op, after, err)
		}

		opts := esdb.SubscribeToAllOptions{From: fromPosition(after)}
		if s.prefix != "" {
			opts.Filter = &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{s.prefix}}
		}
		sub, err := s.client.SubscribeToAll(subCtx, opts)
		if err != nil {
			yield(events.Event{}, end(err))
			return
		}
		defer sub.Close()

		// last guards against a redelivery: positions must only grow.
		last := after
		for {
			se := sub.Recv()
			switch {
			case se.SubscriptionDropped != nil:
				err := se.SubscriptionDropped.Error
				if err == nil {
					err = errors.New("subscription dropped")
				}
				yield(events.Event{}, end(err))
				return
			case se.EventAppeared != nil:
				rec := se.EventAppeared.OriginalEvent()
				ev, ok, err := s.decodeAll(rec)
				if !ok {
					continue
				}
				if err != nil { // poison: yielded, and the subscription goes on
					last = max(last, ev.Position)
					if !yield(ev, err) {
						return
					}
					continue
				}
				if ev.Position <= last {
					if ev.Position == 0 {
						yield(events.Event{}, s.wrap(op, ev.Stream, fmt.Errorf("event %s has no position", ev.ID)))
						return
					}
					continue
				}
				last = ev.Position
				if !yield(ev, nil) {
					return
				}
			}
			// Checkpoints, CaughtUp and FellBehind carry nothing to yield.
		}
	}
}
