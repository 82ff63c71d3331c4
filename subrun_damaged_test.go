package weft_test

import (
	"errors"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// TestRecoverSettlesSubrunsPastADamagedSession: a damaged running session
// elsewhere in the log does not keep Recover from delivering the end of a
// sub-run a dead process left undelivered; Recover still reports the
// damage.
func TestRecoverSettlesSubrunsPastADamagedSession(t *testing.T) {
	store := memstore.New()
	t.Cleanup(func() { store.Close() })
	start := func(agentTools bool) (*weft.Runtime, *weft.Agent, *weft.Agent, error) {
		rt, err := weft.Start(t.Context(), weft.Config{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		lead, deployer, err := subrunAgents(rt, agentTools)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.Recover(t.Context())
		return rt, lead, deployer, err
	}
	rt1, lead, _, err := start(true)
	if err != nil {
		t.Fatal(err)
	}
	sess := lead.NewSession()
	res, err := sess.Run(t.Context(), "ship it")
	if err != nil {
		t.Fatal(err)
	}
	res = settle(t, sess, res.RunID)
	if len(res.Subruns) != 1 {
		t.Fatalf("parent %s with %d sub-run items", res.Status, len(res.Subruns))
	}
	it, runID := res.Subruns[0], res.RunID
	rt1.Close()

	// Without agent tools, the child's end is not delivered.
	rt2, _, deployer, err := start(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deployer.Session(it.SessionID).Decide(t.Context(), weft.Approve(it.ID, "ops", nil)); err != nil {
		t.Fatal(err)
	}
	if cres := settle(t, deployer.Session(it.SessionID), it.RunID); cres.Status != weft.StatusCompleted {
		t.Fatalf("child %s", cres.Status)
	}
	rt2.Close()

	// A running session whose fold refuses an event: damaged.
	bad := []events.Event{
		events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "lead", Input: []byte(`"hi"`)}, events.WithSession("bad"), events.WithRun("r1")),
		events.MustNew(events.TypeRunResumed, events.RunResumed{}, events.WithSession("bad"), events.WithRun("r9")),
	}
	if _, err := store.Append(t.Context(), events.SessionStream("bad"), events.NoStream, bad...); err != nil {
		t.Fatal(err)
	}

	_, lead, _, err = start(true)
	if !errors.Is(err, weft.ErrSessionDamaged) {
		t.Fatalf("Recover: %v, want ErrSessionDamaged", err)
	}
	res = settle(t, lead.Session(sess.ID()), runID)
	if res.Status != weft.StatusCompleted || res.Output != `"the coast is clear" + "deployed prod"` {
		t.Fatalf("parent %s %q", res.Status, res.Output)
	}
}
