package simtests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// effect is what simworker writes per execution of deploy.
type effect struct {
	Worker  string `json:"worker"`
	Session string `json:"session"`
	CallID  string `json:"call_id"`
}

// readEffects returns the executions of deploy in session recorded in dir,
// in time order.
func readEffects(dir, session string) ([]effect, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []effect
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var ef effect
		if err := json.Unmarshal(b, &ef); err != nil {
			return nil, fmt.Errorf("effect file %s: %w", e.Name(), err)
		}
		if ef.Session == session {
			out = append(out, ef)
		}
	}
	return out, nil
}

// startSimWorkers starts simulation workers w1 and w2 (deploy lasting
// deploy, fetch_ticket fetch) writing effects in a new directory it
// returns.
func startSimWorkers(h *harness, deploy, fetch time.Duration) (*sim, string, map[string]*proc) {
	h.t.Helper()
	dir := filepath.Join(h.dir, "effects")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	byID := map[string]*proc{}
	s := h.startSim(func(c *cluster) []*proc {
		for _, id := range []string{"w1", "w2"} {
			byID[id] = h.startSimWorker(c, id, dir, deploy, fetch)
		}
		return []*proc{byID["w1"], byID["w2"]}
	})
	return s, dir, byID
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

// A worker is killed (SIGKILL) while it executes an approved deploy: the
// node hears no heartbeat, sends the call again under the same call id and
// another worker executes it; the run completes with one return, and the
// side effect happened at most twice, every time under that call id.
func TestKillWorkerMidCall(t *testing.T) {
	h := newHarness(t)
	s, dir, workers := startSimWorkers(h, 2*time.Second, 0)
	ctx := s.ctx
	session := "kill-worker"
	if err := s.toWaiting(ctx, session); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot([]string{session})
	v, err := s.c.approve(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	var first []effect
	if err := retry(ctx, func(context.Context) error {
		var err error
		if first, err = readEffects(dir, session); err == nil && len(first) == 0 {
			err = fmt.Errorf("deploy has not started")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	victim := first[0].Worker
	workers[victim].kill()

	evs, err := s.c.await(ctx, session, events.TypeRunCompleted, v)
	if err != nil {
		t.Fatal(err)
	}
	all, err := readEffects(dir, session)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 || len(all) > 2 {
		t.Errorf("deploy ran %d times (%+v), want twice: on %s, killed, then on the other worker", len(all), all, victim)
	}
	for _, ef := range all {
		if ef.CallID != demoApproval {
			t.Errorf("deploy ran under call id %q, want %q", ef.CallID, demoApproval)
		}
	}
	if len(all) > 0 && all[len(all)-1].Worker == victim {
		t.Errorf("the last execution ran on the killed worker %s: %+v", victim, all)
	}
	// Before the approval, the call returned approval_required; after
	// it, once.
	rets := returnsOf(t, evs[v:], demoApproval)
	if len(rets) != 1 {
		t.Fatalf("%d tool.returned for %s after the approval, want 1:%s", len(rets), demoApproval, describe(evs))
	}
	successOf(t, rets[0])
	s.c.checkLog(ctx, []string{session}, before)
}

// A worker is stopped (SIGSTOP) while it executes an approved deploy, past
// its heartbeat deadline: the node sends the call again and the other
// worker executes it (the stopped one has been dropped by the servers by
// then); the run completes with that worker's return. Continued (SIGCONT)
// after that, the stopped worker finishes and reports late: its result is
// ignored, and every execution ran under the call's id.
func TestStopWorkerPastHeartbeat(t *testing.T) {
	h := newHarness(t)
	h.stalePing = 300 * time.Millisecond
	s, dir, workers := startSimWorkers(h, 2*time.Second, 0)
	ctx := s.ctx
	session := "stop-worker"
	if err := s.toWaiting(ctx, session); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot([]string{session})
	// Watch deploy's call (a plain subscription sees the requests the
	// workers' queue group serves), then the reports on its reply subject.
	requests := make(chan *nats.Msg, 16)
	sub, err := s.c.nc.ChanSubscribe("weft.worker.call.deploy", requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	v, err := s.c.approve(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	var req *nats.Msg
	select {
	case req = <-requests:
	case <-ctx.Done():
		t.Fatal("no deploy call seen")
	}
	reports := make(chan *nats.Msg, 1024)
	rsub, err := s.c.nc.ChanSubscribe(req.Reply, reports)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rsub.Unsubscribe() })
	var first []effect
	if err := retry(ctx, func(context.Context) error {
		var err error
		if first, err = readEffects(dir, session); err == nil && len(first) == 0 {
			err = fmt.Errorf("deploy has not started")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stopped := first[0].Worker
	workers[stopped].signal(syscall.SIGSTOP)

	evs, err := s.c.await(ctx, session, events.TypeRunCompleted, v)
	if err != nil {
		t.Fatal(err)
	}
	workers[stopped].signal(syscall.SIGCONT)
	// The continued worker finishes its execution and reports it late,
	// unless the report is lost with the connection the servers dropped;
	// either way it has sent it before it answers a describe request on
	// its new connection, and the node has handled what reached it before
	// it answers a flush round trip sent after that.
	lateSeen := false
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
					lateSeen = true
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
	t.Logf("the stopped worker's late return reached the reply subject: %v", lateSeen)
	after, err := s.c.read(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(evs) {
		t.Errorf("the log grew after the run completed:%s", describe(after[len(evs):]))
	}
	rets := returnsOf(t, after[v:], demoApproval)
	if len(rets) != 1 {
		t.Fatalf("%d tool.returned for %s after the approval, want 1:%s", len(rets), demoApproval, describe(after))
	}
	ret := successOf(t, rets[0])
	var res struct {
		Worker string `json:"worker"`
	}
	if err := json.Unmarshal(ret.Content, &res); err != nil || res.Worker == stopped || res.Worker == "" {
		t.Errorf("the recorded deploy ran on %q (%v), want the worker that was not stopped (%s was)", res.Worker, err, stopped)
	}
	all, err := readEffects(dir, session)
	if err != nil {
		t.Fatal(err)
	}
	// At least once on each worker; a delivery that reached the stopped
	// worker before the servers dropped it runs there once it continues
	// (at-least-once: a stalled worker is why the call id is the
	// idempotency key).
	ran := map[string]int{}
	for _, ef := range all {
		ran[ef.Worker]++
		if ef.CallID != demoApproval {
			t.Errorf("deploy ran under call id %q, want %q", ef.CallID, demoApproval)
		}
	}
	if len(ran) != 2 || len(all) > actors.MaxDeliveries {
		t.Errorf("deploy ran %d times (%+v), want on both workers and at most %d times", len(all), all, actors.MaxDeliveries)
	}
	s.c.checkLog(ctx, []string{session}, before)
}

// A result is delivered twice (a copy of a worker's returned report, and a
// forged one with other content, published on the call's reply subject
// while the rest of the batch still runs): the node records the first
// return only.
func TestDuplicateResult(t *testing.T) {
	h := newHarness(t)
	s, _, _ := startSimWorkers(h, 0, 1500*time.Millisecond)
	ctx := s.ctx
	session := "duplicate-result"

	// Watch the calls of lookup (a plain subscription sees the requests
	// the workers' queue group serves) and the reports on their reply
	// subjects.
	requests := make(chan *nats.Msg, 16)
	sub, err := s.c.nc.ChanSubscribe("weft.worker.call.lookup", requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	v, err := s.c.startRun(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	var req *nats.Msg
	select {
	case req = <-requests:
	case <-ctx.Done():
		t.Fatal("no lookup call seen")
	}
	if req.Header.Get(actors.HeaderCallID) != "call_lookup" {
		t.Fatalf("lookup request with call id %q", req.Header.Get(actors.HeaderCallID))
	}
	// The worker may have answered already: the genuine return is read
	// from the log once lookup's tool.returned is there.
	var genuine events.ToolReturned
	if err := retry(ctx, func(ctx context.Context) error {
		evs, err := s.c.read(ctx, session)
		if err != nil {
			return err
		}
		rets := returnsOf(t, evs, "call_lookup")
		if len(rets) == 0 {
			return fmt.Errorf("lookup has not returned")
		}
		if settled(evs) != "" {
			return backoffStop{fmt.Errorf("the run settled before the duplicate was sent:%s", describe(evs))}
		}
		genuine = rets[0]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var ret toolsets.Return
	if err := json.Unmarshal(genuine.Return, &ret); err != nil {
		t.Fatal(err)
	}
	forged := ret
	forged.Content = json.RawMessage(`{"ticket_id":"T-7","title":"forged","status":"closed"}`)
	for _, r := range []toolsets.Return{ret, forged} {
		b, err := json.Marshal(actors.ToolReport{Type: actors.ReportReturned, CallID: "call_lookup", Tool: "lookup", Return: &r})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.c.nc.Publish(req.Reply, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}

	evs, err := s.c.await(ctx, session, events.TypeRunWaiting, v)
	if err != nil {
		t.Fatal(err)
	}
	rets := returnsOf(t, evs, "call_lookup")
	if len(rets) != 1 {
		t.Fatalf("%d tool.returned for call_lookup, want 1:%s", len(rets), describe(evs))
	}
	if got := successOf(t, rets[0]); strings.Contains(string(got.Content), "forged") {
		t.Errorf("the forged duplicate was recorded: %s", got.Content)
	}
	if err := s.toCompleted(ctx, session); err != nil {
		t.Fatal(err)
	}
	s.c.checkLog(ctx, []string{session}, nil)
}
