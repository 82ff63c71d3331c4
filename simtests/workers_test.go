package simtests

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// effect is what simworker writes per execution of deploy.
type effect struct {
	Worker  string `json:"worker"`
	Session string `json:"session"`
	RunID   string `json:"run_id"`
	CallID  string `json:"call_id"`
}

// readEffects returns the executions of deploy recorded in dir by session,
// each session's in time order, and the last execution of all (the zero
// effect when there is none).
func readEffects(dir string) (map[string][]effect, effect, error) {
	ents, err := os.ReadDir(dir) // sorted by name: by start time
	if err != nil {
		return nil, effect{}, err
	}
	out := map[string][]effect{}
	var last effect
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, effect{}, err
		}
		var ef effect
		if err := json.Unmarshal(b, &ef); err != nil {
			return nil, effect{}, fmt.Errorf("effect file %s: %w", e.Name(), err)
		}
		out[ef.Session] = append(out[ef.Session], ef)
		last = ef
	}
	return out, last, nil
}

// deployStart bounds the wait for the approved deploys to start: they are
// sent at once, and the workers run calls with the same call id of
// different sessions at once.
const deployStart = 15 * time.Second

// waitDeploys waits (up to deployStart) until deploy has started in every
// session (simworker wrote its effect file) and returns the last execution
// of all: its worker is the one whose deploy has the most time left to
// run.
func waitDeploys(ctx context.Context, dir string, sessions []string) (effect, error) {
	ctx, cancel := context.WithTimeout(ctx, deployStart)
	defer cancel()
	var last effect
	err := retry(ctx, func(context.Context) error {
		byS, l, err := readEffects(dir)
		if err != nil {
			return err
		}
		for _, id := range sessions {
			if len(byS[id]) == 0 {
				return fmt.Errorf("deploy has not started in session %s", id)
			}
		}
		last = l
		return nil
	})
	if err != nil {
		return last, fmt.Errorf("the approved deploys did not all start within %v: %w", deployStart, err)
	}
	return last, nil
}

// recordedDeploy checks that the run of session recorded exactly one
// return of deploy after version v (the approval), a success, and returns
// the worker that produced it.
func recordedDeploy(t *testing.T, session string, evs []events.Event, v uint64) string {
	t.Helper()
	if v > uint64(len(evs)) {
		t.Fatalf("session %s: %d events, the approval had version %d", session, len(evs), v)
	}
	rets := returnsOf(t, evs[v:], demoApproval)
	if len(rets) != 1 {
		t.Fatalf("session %s: %d tool.returned for %s after the approval, want 1:%s", session, len(rets), demoApproval, describe(evs))
	}
	ret := successOf(t, rets[0])
	var res struct {
		Worker string `json:"worker"`
	}
	if err := json.Unmarshal(ret.Content, &res); err != nil || res.Worker == "" {
		t.Fatalf("session %s: deploy returned %s, want the worker that ran it (%v)", session, ret.Content, err)
	}
	return res.Worker
}

// checkDeploys checks the executions of deploy in session after a fault of
// worker faulty: each ran under the session's own session, run and call
// ids (the sessions share their call ids), there are at most limit, and
// the recorded return (of worker recorded) came from one of them. It
// reports whether the fault hit the session's deploy: the first execution
// ran on faulty and the recorded one on another worker.
func checkDeploys(t *testing.T, session string, effs []effect, recorded, faulty string, limit int) (hit bool) {
	t.Helper()
	ran := map[string]bool{}
	for _, ef := range effs {
		ran[ef.Worker] = true
		if ef.Session != session || ef.RunID != runID(session) || ef.CallID != demoApproval {
			t.Errorf("session %s: deploy ran as (%s, %s, %s), want (%s, %s, %s)", session,
				ef.Session, ef.RunID, ef.CallID, session, runID(session), demoApproval)
		}
	}
	if len(effs) == 0 || len(effs) > limit {
		t.Errorf("session %s: deploy ran %d times (%+v), want 1 to %d", session, len(effs), effs, limit)
	}
	if !ran[recorded] {
		t.Errorf("session %s: the recorded deploy ran on %s, which has no execution of it: %+v", session, recorded, effs)
	}
	return len(effs) > 0 && effs[0].Worker == faulty && recorded != faulty
}

// startSimWorkers starts simulation workers w1 and w2 configured by o,
// writing effects in a new directory it returns.
func startSimWorkers(h *harness, o workerOpts) (*sim, string, map[string]*proc) {
	h.t.Helper()
	dir := filepath.Join(h.dir, "effects")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	byID := map[string]*proc{}
	s := h.startSim(func(c *cluster) []*proc {
		for _, id := range []string{"w1", "w2"} {
			byID[id] = h.startSimWorker(c, id, dir, o)
		}
		return []*proc{byID["w1"], byID["w2"]}
	})
	return s, dir, byID
}

// A dispatch is how the workers of a test take their calls: from the core
// queue group or from a worker pool.
type dispatch struct {
	name string
	pool string // "" for the queue group
}

// dispatches are the ways the worker fault tests run in.
var dispatches = []dispatch{queueGroup, pooled}

var (
	queueGroup = dispatch{name: "queue-group"}
	pooled     = dispatch{name: "pool", pool: simPool}
)

// callSubject returns the subject a node sends the calls of tool on: the
// tool's call subject, or its subject in the pool stream (which a plain
// subscription sees too).
func (d dispatch) callSubject(t *testing.T, tool string) string {
	t.Helper()
	var (
		s   string
		err error
	)
	if d.pool == "" {
		s, err = actors.WorkerCallSubject(bus.Default, tool)
	} else {
		s, err = actors.WorkerQueueSubject(bus.Default, d.pool, tool)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replyOf returns the subject the reports of call request m go to: its
// reply subject, or for a call sent to a pool, its Weft-Reply header (the
// reply subject of a message published into a stream is the publish
// acknowledgement's).
func replyOf(m *nats.Msg) string {
	if r := m.Header.Get(actors.HeaderReply); r != "" {
		return r
	}
	return m.Reply
}

// forDispatches runs test as a (parallel) subtest for each dispatch.
func forDispatches(t *testing.T, test func(t *testing.T, d dispatch)) {
	t.Parallel()
	for _, d := range dispatches {
		t.Run(d.name, func(t *testing.T) { test(t, d) })
	}
}

// returnsOf returns the tool.returned events of call in evs.
func returnsOf(t *testing.T, evs []events.Event, call string) []events.ToolReturned {
	t.Helper()
	var out []events.ToolReturned
	for _, ev := range evs {
		if ev.Type != events.TypeToolReturned || ev.ToolCallID != call {
			continue
		}
		d, err := events.DecodeAs[events.ToolReturned](ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// successOf decodes a tool.returned's return and fails unless it is a
// success.
func successOf(t *testing.T, r events.ToolReturned) toolsets.Return {
	t.Helper()
	var ret toolsets.Return
	if err := json.Unmarshal(r.Return, &ret); err != nil {
		t.Fatal(err)
	}
	if ret.Kind != toolsets.KindSuccess {
		t.Errorf("%s returned %s: %s", r.Tool, ret.Kind, ret.Content)
	}
	return ret
}

// faultSessions is how many sessions the worker fault tests run at once,
// half on each weft node. The demo model gives the calls of every session
// the same ids (call_lookup, call_fetch, call_deploy), so the workers run
// calls with the same call id for several sessions at once.
const faultSessions = 4

// A worker is killed (SIGKILL) while it executes the approved deploys of
// sessions driven by both nodes: the nodes hear no heartbeat, send each of
// its calls again under the same ids and the other worker executes them;
// every run completes with one return, and each session's side effect
// happened at most twice, every time under that session's ids. With
// pooled workers the nodes publish each call into the pool stream again,
// and the surviving worker pulls it.
func TestKillWorkerMidCall(t *testing.T) { forDispatches(t, testKillWorkerMidCall) }

func testKillWorkerMidCall(t *testing.T, d dispatch) {
	h := newHarness(t)
	s, dir, workers := startSimWorkers(h, workerOpts{deploy: 2 * time.Second, pool: d.pool})
	ctx := s.ctx
	sessions := sessionIDs("kill-worker", faultSessions)
	s.spreadWaiting(sessions)
	before := s.snapshot(sessions)
	approved := s.approveAll(sessions)
	last, err := waitDeploys(ctx, dir, sessions)
	if err != nil {
		t.Fatal(err)
	}
	victim := last.Worker
	workers[victim].kill()

	logs := s.awaitAll(sessions, events.TypeRunCompleted, approved)
	effs, _, err := readEffects(dir)
	if err != nil {
		t.Fatal(err)
	}
	var hit []string
	for _, id := range sessions {
		recorded := recordedDeploy(t, id, logs[id], approved[id])
		if checkDeploys(t, id, effs[id], recorded, victim, 2) {
			hit = append(hit, id)
		}
	}
	// The session whose deploy started last was running on the victim
	// when it died.
	if !slices.Contains(hit, last.Session) {
		t.Errorf("session %s's deploy started on %s and was not run again on the other worker after the kill: %+v", last.Session, victim, effs[last.Session])
	}
	t.Logf("the kill of %s hit the deploys of %v", victim, hit)
	s.c.checkLog(ctx, sessions, before)
}

// A worker is stopped (SIGSTOP) while it executes approved deploys of
// sessions driven by both nodes, past its heartbeat deadline: the nodes
// send its calls again and the other worker executes them (the stopped one
// has been dropped by the servers by then); the runs complete with that
// worker's returns. Continued (SIGCONT) after that, the stopped worker
// finishes and reports late: its results are ignored, and every execution
// ran under its session's ids. With pooled workers the calls go through
// the pool stream: the stopped worker's pulls die with its connection.
func TestStopWorkerPastHeartbeat(t *testing.T) { forDispatches(t, testStopWorkerPastHeartbeat) }

func testStopWorkerPastHeartbeat(t *testing.T, d dispatch) {
	h := newHarness(t)
	h.stalePing = 300 * time.Millisecond
	s, dir, workers := startSimWorkers(h, workerOpts{deploy: 2 * time.Second, pool: d.pool})
	ctx := s.ctx
	sessions := sessionIDs("stop-worker", faultSessions)
	s.spreadWaiting(sessions)
	before := s.snapshot(sessions)
	// Watch the deploy calls (a plain subscription sees the requests the
	// workers' queue group or pool serves), then the reports on their
	// reply subjects.
	requests := make(chan *nats.Msg, 64)
	sub, err := s.c.nc.ChanSubscribe(d.callSubject(t, "deploy"), requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	approved := s.approveAll(sessions)
	reports := make(chan *nats.Msg, 4096)
	for replies := map[string]string{}; len(replies) < len(sessions); {
		var m *nats.Msg
		select {
		case m = <-requests:
		case <-ctx.Done():
			t.Fatalf("deploy calls seen in sessions %v only", slices.Collect(maps.Keys(replies)))
		}
		var req actors.ToolRequest
		if err := json.Unmarshal(m.Data, &req); err != nil {
			t.Fatalf("deploy request %q: %v", m.Data, err)
		}
		if replies[req.SessionID] != "" {
			continue
		}
		replies[req.SessionID] = replyOf(m)
		rsub, err := s.c.nc.ChanSubscribe(replyOf(m), reports)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rsub.Unsubscribe() })
	}
	last, err := waitDeploys(ctx, dir, sessions)
	if err != nil {
		t.Fatal(err)
	}
	stopped := last.Worker
	workers[stopped].signal(syscall.SIGSTOP)

	logs := s.awaitAll(sessions, events.TypeRunCompleted, approved)
	workers[stopped].signal(syscall.SIGCONT)
	// The continued worker finishes its executions and reports them late,
	// unless the reports are lost with the connection the servers
	// dropped; either way it has sent them before it answers a describe
	// request on its new connection, and the nodes have handled what
	// reached them before they answer a flush round trip sent after that.
	lateSeen := 0
	if err := retry(ctx, func(ctx context.Context) error {
		inbox := s.c.nc.NewInbox()
		answers := make(chan *nats.Msg, 16)
		dsub, err := s.c.nc.ChanSubscribe(inbox, answers)
		if err != nil {
			return err
		}
		defer func() { _ = dsub.Unsubscribe() }()
		if err := s.c.nc.PublishRequest("weft.worker.describe", inbox, nil); err != nil {
			return err
		}
		wait := time.NewTimer(500 * time.Millisecond)
		defer wait.Stop()
		for {
			select {
			case m := <-reports:
				var r actors.ToolReport
				if json.Unmarshal(m.Data, &r) == nil && r.Type == actors.ReportReturned && r.Return != nil &&
					strings.Contains(string(r.Return.Content), fmt.Sprintf(`"worker":%q`, stopped)) {
					lateSeen++
				}
			case m := <-answers:
				var d actors.WorkerDescription
				if json.Unmarshal(m.Data, &d) == nil && d.WorkerID == stopped {
					return nil
				}
			case <-wait.C:
				return fmt.Errorf("the continued worker %s does not answer", stopped)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Logf("late returns of the stopped worker seen on the reply subjects: %d", lateSeen)
	effs, _, err := readEffects(dir)
	if err != nil {
		t.Fatal(err)
	}
	var hit []string
	for _, id := range sessions {
		after, err := s.c.read(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// The run's toolsets close after run.completed (their exit is
		// recorded once the run ended): only a toolset.closed may follow;
		// a late return would add tool events.
		var grew []events.Event
		for _, ev := range after[len(logs[id]):] {
			if ev.Type != events.TypeToolsetClosed {
				grew = append(grew, ev)
			}
		}
		if len(grew) > 0 {
			t.Errorf("session %s: the log grew after the run completed:%s", id, describe(grew))
		}
		// A delivery that reached the stopped worker before the servers
		// dropped it may run there once it continues (at-least-once: a
		// stalled worker is why the session, run and call ids are the
		// idempotency key), so up to MaxDeliveries executions.
		recorded := recordedDeploy(t, id, after, approved[id])
		if checkDeploys(t, id, effs[id], recorded, stopped, actors.MaxDeliveries) {
			hit = append(hit, id)
		}
	}
	// The session whose deploy started last was running on the stopped
	// worker: it cannot have returned from there.
	if !slices.Contains(hit, last.Session) {
		t.Errorf("session %s's deploy started on %s and was not run on the other worker while it was stopped: %+v", last.Session, stopped, effs[last.Session])
	}
	t.Logf("stopping %s hit the deploys of %v", stopped, hit)
	s.c.checkLog(ctx, sessions, before)
}

// A result is delivered twice in each of several sessions driven by both
// nodes at once, all with the same call ids (a copy of a worker's returned
// report, and a forged one with other content, published on the reply
// subject of the session's call while the rest of its batch still runs):
// each node records the first return only, in each session.
func TestDuplicateResult(t *testing.T) { forDispatches(t, testDuplicateResult) }

func testDuplicateResult(t *testing.T, d dispatch) {
	h := newHarness(t)
	s, _, _ := startSimWorkers(h, workerOpts{fetch: 1500 * time.Millisecond, pool: d.pool})
	ctx := s.ctx
	sessions := sessionIDs("duplicate-result", faultSessions)

	// Watch the calls of lookup (a plain subscription sees the requests
	// the workers' queue group or pool serves) to learn each session's
	// reply subject.
	requests := make(chan *nats.Msg, 64)
	sub, err := s.c.nc.ChanSubscribe(d.callSubject(t, "lookup"), requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	nodes := spread(sessions)
	started := forAll(t, ctx, sessions, func(ctx context.Context, id string) (uint64, error) {
		return s.c.startRunOn(ctx, nodes[id], id)
	})
	replies := map[string]string{}
	for len(replies) < len(sessions) {
		var m *nats.Msg
		select {
		case m = <-requests:
		case <-ctx.Done():
			t.Fatalf("lookup calls seen in sessions %v only", slices.Collect(maps.Keys(replies)))
		}
		var req actors.ToolRequest
		if err := json.Unmarshal(m.Data, &req); err != nil {
			t.Fatalf("lookup request %q: %v", m.Data, err)
		}
		if req.CallID != "call_lookup" || m.Header.Get(actors.HeaderCallID) != "call_lookup" {
			t.Fatalf("lookup request of session %s with call id %q (header %q)", req.SessionID, req.CallID, m.Header.Get(actors.HeaderCallID))
		}
		if replies[req.SessionID] == "" {
			replies[req.SessionID] = replyOf(m)
		}
	}
	all(t, ctx, sessions, func(ctx context.Context, id string) error {
		// The worker may have answered already: the genuine return is
		// read from the log once lookup's tool.returned is there.
		var genuine events.ToolReturned
		if err := retry(ctx, func(ctx context.Context) error {
			evs, err := s.c.read(ctx, id)
			if err != nil {
				return err
			}
			rets := returnsOf(t, evs, "call_lookup")
			if len(rets) == 0 {
				return fmt.Errorf("session %s: lookup has not returned", id)
			}
			if settled(evs) != "" {
				return backoffStop{fmt.Errorf("session %s: the run settled before the duplicate was sent:%s", id, describe(evs))}
			}
			genuine = rets[0]
			return nil
		}); err != nil {
			return err
		}
		var ret toolsets.Return
		if err := json.Unmarshal(genuine.Return, &ret); err != nil {
			return err
		}
		forged := ret
		forged.Content = json.RawMessage(`{"ticket_id":"T-7","title":"forged","status":"closed"}`)
		for _, r := range []toolsets.Return{ret, forged} {
			b, err := json.Marshal(actors.ToolReport{Type: actors.ReportReturned, CallID: "call_lookup", Tool: "lookup", Return: &r})
			if err != nil {
				return err
			}
			if err := s.c.nc.Publish(replies[id], b); err != nil {
				return err
			}
		}
		return s.c.nc.Flush()
	})

	logs := s.awaitAll(sessions, events.TypeRunWaiting, started)
	for _, id := range sessions {
		if o := s.owner(id); o != nodes[id] {
			t.Errorf("session %s is driven by %s, want %s (it was started there)", id, o, nodes[id])
		}
		rets := returnsOf(t, logs[id], "call_lookup")
		if len(rets) != 1 {
			t.Fatalf("session %s: %d tool.returned for call_lookup, want 1:%s", id, len(rets), describe(logs[id]))
		}
		if got := successOf(t, rets[0]); strings.Contains(string(got.Content), "forged") {
			t.Errorf("session %s: the forged duplicate was recorded: %s", id, got.Content)
		}
	}
	before := s.snapshot(sessions)
	all(t, ctx, sessions, s.toCompleted)
	s.c.checkLog(ctx, sessions, before)
}
