package jetstream

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// scanOrdered calls fn with every event on subjects matching filter with
// stream sequence >= from, in order, through an ordered consumer, until fn
// returns false or the consumer has delivered every message stored when it
// started (its pending count reaches zero). A message that is not a weft
// event is passed to fn as its *events.PoisonError (with an event that has
// only Stream and Position), and the scan goes on.
//
// A damaged store fails the scan at once with an *events.DamagedStoreError
// naming the position: the event stream denies deletes and purges and
// holds only event subjects, so its sequences are dense, and a message the
// consumer skips (a gap) or never delivers (one the server counts but
// cannot read: its pending count then never reaches zero) is damage.
func (s *Store) scanOrdered(ctx context.Context, filter string, from uint64, fn func(ev events.Event, poison error) bool) (int, error) {
	if err := s.live(ctx); err != nil {
		return 0, err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if from > 1 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := s.js.OrderedConsumer(ctx, s.name, cfg)
	if err != nil {
		return 0, s.readErr(ctx, err)
	}
	info := cons.CachedInfo()
	if info == nil || info.NumPending == 0 {
		return 0, nil
	}
	msgs, err := cons.Messages(jetstream.PullMaxMessages(pageSize))
	if err != nil {
		return 0, s.readErr(ctx, err)
	}
	defer msgs.Stop()
	n := 0
	next := max(from, 1) // the sequence the consumer must deliver next
	for {
		msg, err := s.nextMsg(ctx, msgs, next)
		if err != nil {
			return n, s.readErr(ctx, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return n, err
		}
		if seq := meta.Sequence.Stream; seq != next {
			return n, gapError(next, seq)
		}
		next++
		ev, poison := s.decode(msg.Subject(), msg.Data(), meta.Sequence.Stream)
		n++
		if !fn(ev, poison) || meta.NumPending == 0 {
			return n, nil
		}
	}
}

// probeAfter is how long a scan waits for the next message before it asks
// the server whether that message can be read at all.
const probeAfter = 2 * time.Second

// nextMsg returns the consumer's next message, which must be the one at
// sequence seq. While none comes it asks the server every probeAfter for
// message seq directly: when the stream holds seq (its last sequence is
// at or past it) but cannot give it back, the store is damaged, and
// nextMsg returns an *events.DamagedStoreError instead of waiting forever.
func (s *Store) nextMsg(ctx context.Context, msgs jetstream.MessagesContext, seq uint64) (jetstream.Msg, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, probeAfter)
		msg, err := msgs.Next(jetstream.NextContext(wctx))
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return msg, err
		}
		if derr := s.probe(ctx, seq); derr != nil {
			return nil, derr
		}
	}
}
