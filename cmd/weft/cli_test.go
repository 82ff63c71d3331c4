package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// syncBuffer is a buffer safe for a command's goroutine and the test, that
// tells waitFor when it grows.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	notify chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{notify: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until s contains sub, or fails when ctx ends or done
// (the writing command returned) closes first.
func (s *syncBuffer) waitFor(t *testing.T, ctx context.Context, done <-chan struct{}, sub string) string {
	t.Helper()
	for {
		if out := s.String(); strings.Contains(out, sub) {
			return out
		}
		select {
		case <-s.notify:
		case <-done:
			if out := s.String(); strings.Contains(out, sub) {
				return out
			}
			t.Fatalf("the command ended without writing %q:\n%s", sub, s.String())
		case <-ctx.Done():
			t.Fatalf("waiting for %q: %v\n%s", sub, ctx.Err(), s.String())
		}
	}
}

// testNode starts a node listening on a free loopback port, with its data
// in a test directory, stopped at cleanup. The commands the test runs find
// the node's credentials through $WEFT_CREDS_DIR.
func testNode(t *testing.T) (*node, string) {
	t.Helper()
	dir := t.TempDir()
	n, err := startNode(t.Context(), nodeConfig{dataDir: dir, listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.close(); err != nil {
			t.Error(err)
		}
	})
	t.Setenv(credsDirEnv, n.credsDir)
	return n, dir
}

// demoWaiting starts the demo run on n and returns it waiting.
func demoWaiting(t *testing.T, n *node) (*weft.Session, *weft.Result) {
	t.Helper()
	sess, res, err := n.startDemoRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sess, res
}

// cli runs the weft command line in-process.
func cli(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// mustCLI runs the command line and fails the test on an error.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := cli(t, args...)
	if err != nil {
		t.Fatalf("weft %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func decodeJSON[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output is not the JSON expected: %v\n%s", err, out)
	}
	return v
}

func wantContains(t *testing.T, what, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, out)
		}
	}
}

// closedPort returns a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "nats://" + addr
}

// The newcomer's walk-through, in-process: a node with the demo run
// waiting; list it, tail the tool returns, approve it, read the archive,
// the audit timeline and the sessions, replay, then read the stopped
// node's data directory.
func TestWalkthrough(t *testing.T) {
	n, dir := testNode(t)
	sess, res := demoWaiting(t, n)
	id := sess.ID()
	url := "--nats=" + n.url

	// approvals: the pending deploy.
	out := mustCLI(t, "approvals", url)
	wantContains(t, "approvals", out, "call_deploy", "approval", id, res.RunID, "deploy", `{"environment":"production","release":"v1.4.2"}`, "approval policy")
	items := decodeJSON[[]projections.QueueItem](t, mustCLI(t, "approvals", url, "--json"))
	if len(items) != 1 || items[0].ToolCallID != "call_deploy" || items[0].SessionID != id || items[0].Kind != projections.PendingApproval || items[0].Tool != "deploy" {
		t.Errorf("approvals --json = %+v", items)
	}

	// sessions: one, waiting, one pending.
	rows := decodeJSON[[]sessionRow](t, mustCLI(t, "sessions", url, "--json"))
	if len(rows) != 1 || rows[0].SessionID != id || rows[0].Agent != demoAgent || rows[0].Runs != 1 || rows[0].LastStatus != projections.RunWaiting || rows[0].Pending != 1 {
		t.Errorf("sessions --json = %+v", rows)
	}
	wantContains(t, "sessions", mustCLI(t, "sessions", url), "SESSION", id, "support", "waiting")

	// tail the tool returns while approving.
	tailOut, tailErr := newSyncBuffer(), newSyncBuffer()
	tailDone := make(chan struct{})
	var tailRunErr error
	go func() {
		defer close(tailDone)
		tailRunErr = run(t.Context(), []string{"tail", "weft.evt.session.*.tool.returned", "--count", "1", url}, tailOut, tailErr)
	}()
	tailErr.waitFor(t, t.Context(), tailDone, "tailing weft.evt.session.*.tool.returned")

	out = mustCLI(t, "approve", "call_deploy", "--by", "alice", url)
	wantContains(t, "approve", out,
		"resumed run "+res.RunID+" of session "+id,
		"approve call_deploy by alice",
		"run "+res.RunID+" completed: Ticket T-7 is fixed: v1.4.2 is deployed to production.")
	<-tailDone
	if tailRunErr != nil {
		t.Fatalf("tail: %v\n%s", tailRunErr, tailErr.String())
	}
	wantContains(t, "tail", tailOut.String(), "session-"+id, "tool.returned", "deploy", "call=call_deploy kind=success")
	if lines := strings.Count(tailOut.String(), "\n"); lines != 1 {
		t.Errorf("tail --count 1 printed %d lines:\n%s", lines, tailOut.String())
	}

	// show: the archive of a completed run.
	wantContains(t, "show", mustCLI(t, "show", id, url),
		"session "+id, "status=completed", "output: Ticket T-7 is fixed: v1.4.2 is deployed to production.", "pending (0)", "messages (6)")
	arch := decodeJSON[projections.SessionArchive](t, mustCLI(t, "show", "--json", id, url))
	if len(arch.Runs) != 1 || arch.Runs[0].Status != projections.RunCompleted || len(arch.Pending) != 0 || arch.Usage.ToolCalls != 3 {
		t.Errorf("show --json: runs %+v, pending %+v, usage %+v", arch.Runs, arch.Pending, arch.Usage)
	}

	// audit: the decision and the end of the run.
	wantContains(t, "audit", mustCLI(t, "audit", id, url), "approval.requested", "approval.decided", "approved by alice", "run.completed")
	lines := decodeJSON[[]projections.AuditLine](t, mustCLI(t, "audit", id, url, "--json"))
	if len(lines) == 0 || lines[len(lines)-1].Type != events.TypeRunCompleted || lines[0].Type != events.TypeRunStarted {
		t.Errorf("audit --json: %d lines, %+v", len(lines), lines)
	}

	// sessions again, and an empty queue.
	rows = decodeJSON[[]sessionRow](t, mustCLI(t, "sessions", url, "--json"))
	if len(rows) != 1 || rows[0].LastStatus != projections.RunCompleted || rows[0].Pending != 0 {
		t.Errorf("sessions --json after the approval = %+v", rows)
	}
	if out := mustCLI(t, "approvals", url); !strings.Contains(out, "nothing pending") {
		t.Errorf("approvals after the approval:\n%s", out)
	}

	// replay: every event of the log, read once.
	rep := decodeJSON[replayReport](t, mustCLI(t, "replay", url, "--json"))
	want := replayReport{Events: uint64(len(lines)), Position: lines[len(lines)-1].Position, Applied: 3 * uint64(len(lines)), Sessions: 1, Runs: 1, Pending: 0, AuditLines: len(lines)}
	rep.Seconds, rep.EventsPerSecond = 0, 0
	if rep != want {
		t.Errorf("replay --json = %+v, want %+v", rep, want)
	}
	out, errOut, err := cli(t, "replay", url, "--progress")
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "replay", out, "replayed "+itoa(len(lines))+" events", "archive: 1 sessions, 1 runs", "hitl:    0 pending", "audit:   "+itoa(len(lines))+" lines", "events/s")
	wantContains(t, "replay's progress bar", errOut, "\r[", "] 100% "+itoa(len(lines))+"/"+itoa(len(lines))+" events\n")

	// The stopped node's data directory.
	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	rows = decodeJSON[[]sessionRow](t, mustCLI(t, "sessions", "--data", dir, "--json"))
	if len(rows) != 1 || rows[0].SessionID != id || rows[0].LastStatus != projections.RunCompleted {
		t.Errorf("sessions --data = %+v", rows)
	}
	wantContains(t, "replay --data", mustCLI(t, "replay", "--data", dir), "replayed "+itoa(len(lines))+" events")
}

// Deny, then show and audit say so.
func TestDeny(t *testing.T) {
	n, _ := testNode(t)
	sess, res := demoWaiting(t, n)
	url := "--nats=" + n.url
	out := mustCLI(t, "deny", "--session", sess.ID(), "call_deploy", "--reason", "change freeze", "--by", "bob", url)
	wantContains(t, "deny", out, "deny call_deploy by bob: change freeze", "run "+res.RunID+" completed: Ticket T-7: the fix is not deployed.")
	wantContains(t, "audit", mustCLI(t, "audit", sess.ID(), url), "denied by bob: change freeze")
}

// approve --json prints the reply and the event that settled the run.
func TestApproveJSON(t *testing.T) {
	n, _ := testNode(t)
	sess, res := demoWaiting(t, n)
	rep := decodeJSON[decideReport](t, mustCLI(t, "approve", "call_deploy", "--json", "--args", `{"release":"v1.4.3","environment":"staging"}`, "--nats", n.url))
	if rep.SessionID != sess.ID() || rep.RunID != res.RunID || rep.Version == 0 || len(rep.Decisions) != 1 || rep.Settled == nil || rep.Settled.Type != events.TypeRunCompleted {
		t.Fatalf("approve --json = %+v", rep)
	}
	if d := rep.Decisions[0]; d.Action != actionApprove || d.ID != "call_deploy" || d.By != "cli" || compact(d.Arguments) != `{"environment":"staging","release":"v1.4.3"}` {
		t.Errorf("decision = %+v", d)
	}
	done, err := events.DecodeAs[events.RunCompleted](*rep.Settled)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(done.Output), `"Ticket T-7 is fixed: v1.4.3 is deployed to staging."`; got != want {
		t.Errorf("output = %s, want %s (the reviewed arguments)", got, want)
	}
}
