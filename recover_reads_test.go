package weft_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/events/storetest"
)

// TestRecoverReadsTheLogOnce: with agent tools registered (so sub-run
// recovery runs too), Recover reads the whole log once, and RecoverWith
// shows its visitor every event of that read, in log order.
func TestRecoverReadsTheLogOnce(t *testing.T) {
	store := memstore.New()
	t.Cleanup(func() { store.Close() })
	rt1 := startOn(t, store)
	lead, _, err := subrunAgents(rt1, true)
	if err != nil {
		t.Fatal(err)
	}
	waitingForSubrun(t, lead) // a parent waits for a child's approval
	rt1.Close()

	var want []uint64
	for ev, err := range store.ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev.Position)
	}
	counted := &storetest.ReadCounter{Store: store}
	rt2 := startOn(t, counted)
	if _, _, err := subrunAgents(rt2, true); err != nil {
		t.Fatal(err)
	}
	counted.Reset()
	var got []uint64
	if _, err := rt2.RecoverWith(t.Context(), func(ev events.Event) { got = append(got, ev.Position) }); err != nil {
		t.Fatal(err)
	}
	if n := counted.Reads(); n != 1 {
		t.Errorf("Recover read the whole log %d times, want 1", n)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the events RecoverWith showed (-want +got):\n%s", diff)
	}
}
