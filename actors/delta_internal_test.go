package actors

import (
	"testing"

	"github.com/weft-run/weft/events"
)

// A delta is offered to the live publisher, never pushed: with its queue
// full, offer reports false at once instead of making the model's
// goroutine wait, while the events' enqueue keeps its backpressure.
func TestDeltaOfferNeverWaits(t *testing.T) {
	p := &livePublisher{q: make(chan []liveCopy, 1)}
	d := newRecord(events.TypeModelDelta, "s1", "r1", "", events.ModelDelta{Step: 1, Seq: 1, Text: "a"})
	if !p.offer(d, "weft.delta.session.s1") {
		t.Fatal("offer to an empty queue refused")
	}
	if p.offer(d, "weft.delta.session.s1") {
		t.Fatal("offer to a full queue accepted")
	}
	p.closed = true
	<-p.q
	if p.offer(d, "weft.delta.session.s1") {
		t.Error("offer to a closed publisher accepted")
	}
}
