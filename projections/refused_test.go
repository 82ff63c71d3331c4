package projections_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// A refused resume (decision.refused) leaves the HITL queue as it was, and
// the audit timeline shows it: who tried, the refusal's code and why.
func TestRefusedDecisions(t *testing.T) {
	i := slices.IndexFunc(histories, func(h history) bool { return h.name == "refused" })
	evs := loadHistory(t, histories[i])
	now := evs[len(evs)-1].Time.Add(time.Minute)
	queueAt := func(n int) []projections.QueueItem {
		t.Helper()
		q := projections.NewQueue(projections.WithClock(func() time.Time { return now }))
		if _, err := projections.NewRunner(newStore(t, evs[:n]), []projections.Projection{q}).CatchUp(t.Context()); err != nil {
			t.Fatal(err)
		}
		return q.Items()
	}
	var refused []int
	for i, ev := range evs {
		if ev.Type == events.TypeDecisionRefused {
			refused = append(refused, i)
		}
	}
	if len(refused) != 2 {
		t.Fatalf("%d decision.refused in the history, want 2", len(refused))
	}
	for _, i := range refused {
		before, after := queueAt(i), queueAt(i+1)
		if len(before) != 1 || before[0].ToolCallID != "d3" {
			t.Fatalf("queue before the refusal at %d: %+v; want d3 pending", i, before)
		}
		if d := cmp.Diff(before, after); d != "" {
			t.Errorf("the refusal at %d changed the queue (-before +after):\n%s", i, d)
		}
	}

	audit := projections.NewAudit()
	if _, err := projections.NewRunner(newStore(t, evs), []projections.Projection{audit}).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines, err := audit.Timeline(evs[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		if l.Type == events.TypeDecisionRefused {
			got = append(got, l.CallID+" "+l.Tool+" "+l.Outcome)
		}
	}
	want := []string{"d9  refused unknown_decision by mallory: ", "d3 deploy refused wrong_decision by mallory: "}
	if len(got) != len(want) {
		t.Fatalf("audit lines of refusals: %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("audit line %q, want it to start with %q", got[i], want[i])
		}
	}
}
