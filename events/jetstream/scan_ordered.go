package jetstream

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// scanOrdered calls fn with every event on subjects matching filter with
// stream sequence >= from, in order, through an ordered consumer, until fn
// returns false or the consumer has delivered every message stored when it
// started (its pending count reaches zero).
func (s *Store) scanOrdered(ctx context.Context, filter string, from uint64, fn func(ev events.Event) bool) (int, error) {
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
		ev, err := decodeEvent(msg.Data(), meta.Sequence.Stream)
		if err != nil {
			return n, err
		}
		n++
		if !fn(ev) || meta.NumPending == 0 {
			return n, nil
		}
	}
}
