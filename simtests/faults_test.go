package simtests

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weft-run/weft/events"
)

// sessionIDs returns n session ids for test name.
func sessionIDs(name string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", name, i+1)
	}
	return out
}

// each runs fn for every session, one session after the other, and fails
// the test on an error.
//
// Not at once: the demo model names its calls call_lookup, call_fetch and
// call_deploy in every session, and a worker takes a call id it is
// running already for a re-delivery of that call (the call id is the
// protocol's idempotency key), so two sessions calling the same tool at
// the same moment lose one call (the worker protocol keys calls by call id
// alone; call ids are unique within a run only).
func each(t *testing.T, ctx context.Context, sessions []string, fn func(ctx context.Context, s string) error) {
	t.Helper()
	for _, s := range sessions {
		if err := fn(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot reads the streams of sessions: their events are acknowledged.
func snapshot(t *testing.T, ctx context.Context, c *client, sessions []string) map[string][]events.Event {
	t.Helper()
	out := map[string][]events.Event{}
	for _, s := range sessions {
		evs, err := c.read(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		out[s] = evs
	}
	return out
}

// The node driving a session is killed (SIGKILL) while its run waits for
// approval; the approval, sent to the cluster, is served by the survivor
// once the dead node's lease expires, and every run completes.
func TestKillOwnerWhileWaiting(t *testing.T) {
	h := newHarness(t)
	_, nodes, c := h.startAll()
	ctx := h.ctx

	sessions := sessionIDs("kill-owner", 6)
	each(t, ctx, sessions, func(ctx context.Context, s string) error {
		if err := c.startRun(ctx, s); err != nil {
			return err
		}
		_, err := c.await(ctx, s, events.TypeRunWaiting)
		return err
	})
	owners := map[string][]string{}
	for _, s := range sessions {
		o, err := c.owner(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		owners[o] = append(owners[o], s)
	}
	victim := "a"
	if len(owners["b"]) > len(owners["a"]) {
		victim = "b"
	}
	if len(owners[victim]) == 0 {
		t.Fatalf("no session is owned by a weft node: owners %v", owners)
	}
	t.Logf("owners before the kill: %v; killing %s", owners, victim)
	before := snapshot(t, ctx, c, sessions)
	nodes[victim].p.kill()

	each(t, ctx, sessions, func(ctx context.Context, s string) error {
		if err := c.approve(ctx, s); err != nil {
			return err
		}
		_, err := c.await(ctx, s, events.TypeRunCompleted)
		return err
	})
	survivor := "a"
	if victim == "a" {
		survivor = "b"
	}
	for _, s := range owners[victim] {
		if o, err := c.owner(ctx, s); err != nil || (o != survivor && o != "") {
			t.Errorf("session %s is owned by %q after the takeover (%v)", s, o, err)
		}
	}
	c.checkLog(ctx, sessions, before)
	if !slices.Equal(nodes[survivor].rep.Agents, []string{demoAgent}) {
		t.Errorf("survivor's agents = %v", nodes[survivor].rep.Agents)
	}
}
