package jetstream

import (
	"context"
	"errors"
	"iter"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// subscribeBuffer is how many messages the ordered consumer keeps in
// flight.
const subscribeBuffer = 1024

// Subscribe implements events.Subscriber with an ordered consumer on every
// event subject, starting at stream sequence after+1. The consumer is
// ephemeral: the server removes it when the loop ends. It ends with
// ctx.Err() when ctx is done and with ErrClosed when the store is closed. A
// message that is not a weft event is yielded as an *events.PoisonError
// with its Stream and Position, and the subscription goes on. A message the
// consumer skips (a damaged store) ends it with an
// *events.DamagedStoreError.
func (s *Store) Subscribe(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		fail := func(err error) { yield(events.Event{}, &events.Error{Op: "subscribe", Err: err}) }
		if err := s.live(ctx); err != nil {
			fail(err)
			return
		}
		// End the subscription when the store closes, as well as with ctx.
		subCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.closing, cancel)
		defer stop()

		cfg := jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{s.subjects.AllEvents()},
			DeliverPolicy:  jetstream.DeliverAllPolicy,
		}
		if after > 0 {
			cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
			cfg.OptStartSeq = after + 1
		}
		cons, err := s.js.OrderedConsumer(subCtx, s.name, cfg)
		if err != nil {
			fail(s.readErr(ctx, err))
			return
		}
		msgs, err := cons.Messages(jetstream.PullMaxMessages(subscribeBuffer))
		if err != nil {
			fail(s.readErr(ctx, err))
			return
		}
		defer msgs.Stop()
		next := after + 1 // the sequence the consumer must deliver next (see scanOrdered)
		for {
			msg, err := msgs.Next(jetstream.NextContext(subCtx))
			if err != nil {
				if s.closed() {
					fail(events.ErrClosed)
					return
				}
				if ctx.Err() != nil {
					yield(events.Event{}, ctx.Err())
					return
				}
				fail(err)
				return
			}
			meta, err := msg.Metadata()
			if err != nil {
				fail(err)
				return
			}
			if seq := meta.Sequence.Stream; seq != next {
				fail(gapError(next, seq))
				return
			}
			next++
			ev, poison := s.decode(msg.Subject(), msg.Data(), meta.Sequence.Stream)
			if poison == nil {
				// Resolve as ReadAll does: a missing or altered blob is
				// poison, any other failure ends the subscription.
				if berr := events.ResolveBlob(subCtx, s, &ev); berr != nil {
					if !errors.Is(berr, events.ErrBlobNotFound) && !errors.Is(berr, events.ErrBlobCorrupt) {
						fail(berr)
						return
					}
					poison = events.Poison(ev, berr)
				}
			}
			if poison != nil {
				poison = &events.Error{Op: "subscribe", Stream: ev.Stream, Err: poison}
			}
			if !yield(ev, poison) {
				return
			}
		}
	}
}
