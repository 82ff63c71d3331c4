package weft_test

import (
	"testing"
	"time"

	"github.com/weft-run/weft"
)

// TestAgentToolOnAnotherNode: node A starts a parent whose two children
// run there, one waiting for an approval; A stops. Node B decides the
// child's approval (taking the child's session over), the child's end
// resumes the parent (which B takes over too), and the parent completes.
func TestAgentToolOnAnotherNode(t *testing.T) {
	url := listeningServer(t)
	node := func(id string) (*weft.Runtime, *weft.Agent, *weft.Agent) {
		rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: id, LeaseTTL: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		lead, deployer, err := subrunAgents(rt, true)
		if err != nil {
			t.Fatal(err)
		}
		return rt, lead, deployer
	}
	rtA, leadA, _ := node("node-a")
	sess, runID, it := waitingForSubrun(t, leadA)
	if err := rtA.Close(); err != nil {
		t.Fatal(err)
	}

	_, leadB, deployerB := node("node-b")
	if _, err := deployerB.Session(it.SessionID).Decide(t.Context(), weft.Approve(it.ID, "ops", nil)); err != nil {
		t.Fatal(err)
	}
	res := settle(t, leadB.Session(sess.ID()), runID)
	if res.Status != weft.StatusCompleted || res.Output != `"the coast is clear" + "deployed prod"` {
		t.Fatalf("parent %s %q (%v)", res.Status, res.Output, res.Err)
	}
}
