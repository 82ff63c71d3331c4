package main

import (
	"errors"
	"testing"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/projections"
)

// TestReplayCheck: a session the node recorded (waiting, a refused
// decision, then approved and completed) replays to the same events; an
// unknown session is an error.
func TestReplayCheck(t *testing.T) {
	n, _ := testNode(t)
	sess, _ := demoWaiting(t, n)
	url := "--nats=" + n.url

	out := mustCLI(t, "replay-check", sess.ID(), url)
	wantContains(t, "replay-check of a waiting session", out, "replay matches the recording")

	// A refused decision (reviewed arguments that fail the tool's schema)
	// is in the log: audit shows it, replay and replay-check read past it.
	_, _, err := cli(t, "approve", "call_deploy", "--by", "mallory", "--args", `{"release":7,"environment":"production"}`, url)
	if !errors.Is(err, actors.ErrWrongDecision) {
		t.Fatalf("approve with arguments that fail the schema: err = %v, want ErrWrongDecision", err)
	}
	wantContains(t, "audit", mustCLI(t, "audit", sess.ID(), url), "decision.refused", "refused wrong_decision by mallory", `"release"`)
	wantContains(t, "replay", mustCLI(t, "replay", url), "hitl:    1 pending")
	wantContains(t, "replay-check after a refused decision", mustCLI(t, "replay-check", sess.ID(), url), "replay matches the recording")

	mustCLI(t, "approve", "call_deploy", "--by", "alice", url)
	rep := decodeJSON[replayCheckReport](t, mustCLI(t, "replay-check", sess.ID(), url, "--json"))
	if !rep.OK || rep.Divergence != nil || rep.Events < 20 || rep.SessionID != sess.ID() {
		t.Errorf("replay-check --json of the completed session = %+v, want ok over the whole session", rep)
	}
	// A short id names the session, in replay-check as in show and audit.
	short := sess.ID()[:len(sess.ID())-6]
	wantContains(t, "replay-check SHORT", mustCLI(t, "replay-check", short, url), "replay matches the recording", sess.ID())
	wantContains(t, "show SHORT", mustCLI(t, "show", short, url), "session "+sess.ID())

	_, _, err = cli(t, "replay-check", "no-such-session", url)
	if !errors.Is(err, projections.ErrUnknownSession) {
		t.Errorf("replay-check of an unknown session: err = %v, want ErrUnknownSession", err)
	}
	_, _, err = cli(t, "replay-check", url)
	if !errors.Is(err, errUsage) {
		t.Errorf("replay-check without a session: err = %v, want a usage error", err)
	}
}
