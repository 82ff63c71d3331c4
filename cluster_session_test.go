package weft_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
)

// TestClusterRunThroughOtherNode calls Run and Resume through node B on a
// session that node A owns: A drives every run (the commands reach it
// directly or forwarded by B), and B's calls return the runs' results all
// the same, followed on the session's event subjects. Each call is bounded
// by a short timeout, so a call that only heard runs its own node drives
// fails instead of hanging.
func TestClusterRunThroughOtherNode(t *testing.T) {
	url := listeningServer(t)
	var runsA, runsB atomic.Int32
	rtA, agentA := clusterNode(t, url, "node-a", &runsA)
	// B does not run yet: the first run's command can only reach A, which
	// takes the session's lease.
	first, err := agentA.NewSession().Run(t.Context(), "deploy")
	if err != nil || first.Status != weft.StatusWaiting {
		t.Fatalf("Run on A = %+v, %v", first, err)
	}
	id := first.SessionID
	_, agentB := clusterNode(t, url, "node-b", &runsB)
	sessB := agentB.Session(id)

	type want struct {
		Status  weft.Status
		Output  string
		Pending []string
	}
	steps := []struct {
		name string
		do   func(context.Context) (*weft.Result, error)
		want want
	}{
		{name: "resume the run A started", do: func(ctx context.Context) (*weft.Result, error) {
			return sessB.Resume(ctx, weft.Approve("d1", "ops", nil))
		}, want: want{Status: weft.StatusCompleted, Output: "deployed"}},
		{name: "run again", do: func(ctx context.Context) (*weft.Result, error) {
			return sessB.Run(ctx, "deploy again")
		}, want: want{Status: weft.StatusWaiting, Pending: []string{"d1"}}},
		{name: "resume the new run", do: func(ctx context.Context) (*weft.Result, error) {
			return sessB.Resume(ctx, weft.Approve("d1", "ops", nil))
		}, want: want{Status: weft.StatusCompleted, Output: "deployed"}},
	}
	for _, step := range steps {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		res, err := step.do(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s through B: %v", step.name, err)
		}
		got := want{Status: res.Status, Output: res.Output}
		for _, p := range res.Pending.Approvals {
			got.Pending = append(got.Pending, p.ID)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Fatalf("%s through B: result (-want +got):\n%s", step.name, diff)
		}
		if res.SessionID != id || res.RunID == "" {
			t.Fatalf("%s through B: session %q run %q", step.name, res.SessionID, res.RunID)
		}
		// The result is the run's as its owner recorded it.
		onA, err := agentA.Session(id).Wait(t.Context(), res.RunID)
		if err != nil {
			t.Fatalf("%s: Wait on A: %v", step.name, err)
		}
		if diff := cmp.Diff(onA, res); diff != "" {
			t.Fatalf("%s: result through B differs from A's (-A +B):\n%s", step.name, diff)
		}
	}
	if owner, err := rtA.SessionOwner(t.Context(), id); err != nil || owner != "node-a" {
		t.Fatalf("owner = %q, %v; want node-a to have driven every run", owner, err)
	}
	if runsA.Load() != 2 || runsB.Load() != 0 {
		t.Errorf("deploy ran %d times on A and %d on B, want 2 and 0", runsA.Load(), runsB.Load())
	}
}
