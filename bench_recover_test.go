package weft_test

import (
	"fmt"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// BenchmarkRecover: Recover over a log of 20,000 events (2,000 sessions of
// five ended runs each) on a runtime with agent tools, so sub-run recovery
// runs too; nothing is running, so it measures the start-up read.
func BenchmarkRecover(b *testing.B) {
	store := memstore.New()
	b.Cleanup(func() { store.Close() })
	for s := range 2000 {
		id := fmt.Sprintf("s%d", s)
		var evs []events.Event
		for r := range 5 {
			run := fmt.Sprintf("r%d", r)
			evs = append(evs,
				events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "lead", Input: []byte(`"hi"`)}, events.WithSession(id), events.WithRun(run)),
				events.MustNew(events.TypeRunCompleted, events.RunCompleted{Output: []byte(`"done"`)}, events.WithSession(id), events.WithRun(run)))
		}
		if _, err := store.Append(b.Context(), events.SessionStream(id), events.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
	rt, err := weft.Start(b.Context(), weft.Config{Store: store})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	if _, _, err := subrunAgents(rt, true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Recover(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
