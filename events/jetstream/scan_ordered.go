package jetstream

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// scanOrdered calls fn with every event on subjects matching filter with
// stream sequence >= from, in order, through an ordered consumer, until fn
// returns false or the consumer has delivered every message stored when it
// started (its pending count reaches zero). A message that is not a weft
// event is passed to fn as its *events.PoisonError (with an event that has
// only Stream and Position), and the scan goes on.
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
	for {
		msg, err := msgs.Next(jetstream.NextContext(ctx))
		if err != nil {
			return n, s.readErr(ctx, err)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return n, err
		}
		ev, poison := s.decode(msg.Subject(), msg.Data(), meta.Sequence.Stream)
		n++
		if !fn(ev, poison) || meta.NumPending == 0 {
			return n, nil
		}
	}
}
