package httpapi

import (
	"strconv"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
)

// Clients of one subject share one subscription, which ends with the last
// of them; a client whose buffer is full misses the message and is told
// so (its stream then reads the log).
func TestFanoutSharesASubscription(t *testing.T) {
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	f := newFanout(rt.Conn())
	a, b := newLiveClient(4), newLiveClient(1)
	leaveA, err := f.join(feed{deltas: "t.subject"}, a)
	if err != nil {
		t.Fatal(err)
	}
	leaveB, err := f.join(feed{deltas: "t.subject"}, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.hubs) != 1 {
		t.Fatalf("%d subscriptions for one subject", len(f.hubs))
	}
	for _, m := range []string{"1", "2"} {
		if err := rt.Conn().Publish("t.subject", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1", "2"} {
		select {
		case m := <-a.ch:
			if string(m.data) != want {
				t.Fatalf("a got %q, want %q", m.data, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a got nothing")
		}
	}
	if m := <-b.ch; string(m.data) != "1" || !b.missed.Load() || a.missed.Load() {
		t.Fatalf("b got %q, missed %v (a missed %v): want 1, then 2 missed", m.data, b.missed.Load(), a.missed.Load())
	}
	leaveA()
	if len(f.hubs) != 1 {
		t.Fatal("the subscription ended with a client left")
	}
	leaveB()
	if len(f.hubs) != 0 {
		t.Fatal("the subscription outlived its clients")
	}
}

// A feed's event and delta subjects come in one order, the order one
// connection published them in: a run's last deltas never come after its
// run.completed (with a subscription each they could).
func TestFanoutKeepsThePublishOrder(t *testing.T) {
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	f := newFanout(rt.Conn())
	const n = 4000
	c := newLiveClient(n)
	leave, err := f.join(feed{events: "t.evt.>", deltas: "t.delta"}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	for i := range n {
		subject := "t.delta"
		if i%3 == 2 {
			subject = "t.evt.x"
		}
		if err := rt.Conn().Publish(subject, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		select {
		case m := <-c.ch:
			if string(m.data) != strconv.Itoa(i) {
				t.Fatalf("message %d is %q: out of the publish order", i, m.data)
			}
			if m.delta != (i%3 != 2) {
				t.Fatalf("message %d: delta %v", i, m.delta)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d never came", i)
		}
	}
	if c.missed.Load() {
		t.Error("a message was missed")
	}
}
