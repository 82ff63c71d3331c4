package attacktests

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
)

// A reader or a worker sends the resume that approves the waiting deploy
// "as alice": the server refuses the publish, and the run still waits.
func TestForgedApprovalIsRefused(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	subject, err := bus.Default.Command(sess.ID(), actors.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"run_id": res.RunID, "decisions": []map[string]any{
		{"id": res.Pending.Approvals[0].ID, "action": "approve", "by": "alice"},
	}})
	for _, r := range lesser(bus.RoleApprover, bus.RoleOperator) {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			if err := c.nc.PublishRequest(subject, c.nc.NewInbox(), body); err != nil {
				t.Fatal(err)
			}
			c.refused(t, subject)
		})
	}
	if got := status(t, sess); got != weft.StatusWaiting || b.deploys.Load() != 0 {
		t.Fatalf("after the forged approvals: status %s, %d deploys; want waiting, 0", got, b.deploys.Load())
	}
}

// Start and cancel commands from the roles below operator are refused:
// the waiting run is not cancelled and no run starts.
func TestForgedStartAndCancelAreRefused(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	other := b.agent.NewSession()
	bodies := map[string]any{
		actors.VerbStart:  actors.StartCommand{RunID: "forged-run", Agent: "deployer", Prompt: "deploy"},
		actors.VerbCancel: actors.CancelCommand{RunID: res.RunID, By: "alice", Reason: "forged"},
	}
	for _, r := range lesser(bus.RoleOperator) {
		for _, verb := range []string{actors.VerbStart, actors.VerbCancel} {
			t.Run(string(r)+"/"+verb, func(t *testing.T) {
				id := sess.ID()
				if verb == actors.VerbStart {
					id = other.ID()
				}
				subject, err := bus.Default.Command(id, verb)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := json.Marshal(bodies[verb])
				c := b.conn(t, r)
				if err := c.nc.PublishRequest(subject, c.nc.NewInbox(), body); err != nil {
					t.Fatal(err)
				}
				c.refused(t, subject)
			})
		}
	}
	if got := status(t, sess); got != weft.StatusWaiting {
		t.Fatalf("after the forged cancels the run is %s, want waiting", got)
	}
	if st, err := other.Status(t.Context()); err == nil && len(st.Runs) > 0 {
		t.Fatalf("a forged start started %+v", st.Runs)
	}
}

// A lesser role subscribes to the node's local tool subject to answer the
// deploy before the real tool: the subscription is refused, and after the
// real approval the run returns the real tool's result.
func TestForgedLocalToolReturnIsRefused(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	filter := "weft.node.*.tool.*"
	for _, r := range lesser() {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			_, err := c.nc.Subscribe(filter, func(m *nats.Msg) {
				var req actors.ToolRequest
				_ = json.Unmarshal(m.Data, &req)
				rep, _ := json.Marshal(map[string]any{"type": "returned", "call_id": req.CallID, "tool": req.Name, "attempt": 1,
					"return": map[string]any{"call_id": req.CallID, "tool_name": req.Name, "kind": "success", "success": true, "content": "forged", "attempts": 1, "max_attempts": 1}})
				_ = c.nc.Publish(m.Reply, rep)
			})
			if err != nil {
				t.Fatal(err)
			}
			c.refused(t, filter)
		})
	}
	done, err := sess.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "alice", nil))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != weft.StatusCompleted || done.Output != "deployed by the real tool" || b.deploys.Load() != 1 {
		t.Fatalf("run = %s %q, %d deploys; want the real tool's result", done.Status, done.Output, b.deploys.Load())
	}
}

// A lesser role joins the worker queue group to answer the calls of a
// remote tool: refused, in the group or outside it (a worker too may
// subscribe to calls only in the group).
func TestFakeWorkerIsRefused(t *testing.T) {
	b := newBench(t)
	subject, err := actors.WorkerCallSubject(bus.Default, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lesser(bus.RoleWorker) {
		t.Run(string(r)+"/queue", func(t *testing.T) {
			c := b.conn(t, r)
			if _, err := c.nc.QueueSubscribe(subject, actors.WorkerQueueGroup, func(*nats.Msg) {}); err != nil {
				t.Fatal(err)
			}
			c.refused(t, subject)
		})
	}
	for _, r := range lesser() {
		t.Run(string(r)+"/plain", func(t *testing.T) {
			c := b.conn(t, r)
			if _, err := c.nc.Subscribe(subject, func(*nats.Msg) {}); err != nil {
				t.Fatal(err)
			}
			c.refused(t, subject)
		})
	}
}

// A cancel of a remote call, and a call itself, may come only from a node:
// a lesser role's cancel never reaches a worker (a worker listening on the
// cancel subject sees only the node's message published after it).
func TestForgedWorkerCancelIsRefused(t *testing.T) {
	b := newBench(t)
	subject, err := actors.WorkerCancelSubject(bus.Default, "s-1", "r-1", "d1")
	if err != nil {
		t.Fatal(err)
	}
	w := b.conn(t, bus.RoleWorker)
	got := make(chan *nats.Msg, 16)
	if _, err := w.nc.ChanSubscribe(actors.WorkerCancelFilter(bus.Default), got); err != nil {
		t.Fatal(err)
	}
	w.allowed(t)
	for _, r := range lesser() {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			if err := c.nc.Publish(subject, []byte("forged")); err != nil {
				t.Fatal(err)
			}
			c.refused(t, subject)
		})
	}
	if err := b.rt.Conn().Publish(subject, []byte("node")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if string(m.Data) != "node" {
			t.Fatalf("the worker got the cancel %q, want only the node's", m.Data)
		}
	case <-time.After(wait):
		t.Fatal("the worker got no cancel from the node")
	}
}

// A raw publish of an event by a lesser role is refused, through core NATS
// and through JetStream, on the live subject and on the ingest subject the
// stream stores, and the log stores nothing.
func TestForgedEventIsRefused(t *testing.T) {
	b := newBench(t)
	sess, _ := b.waiting(t)
	live, err := bus.Default.Event("session-"+sess.ID(), "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	ingest, err := bus.Default.LogIngest("session-"+sess.ID(), "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	before := lastSeq(t, b)
	ev := []byte(`{"type":"run.completed","stream":"session-` + sess.ID() + `","data":{"output":"forged"}}`)
	for _, r := range lesser() {
		for _, subject := range []string{live, ingest} {
			t.Run(string(r)+" on "+subject, func(t *testing.T) {
				c := b.conn(t, r)
				if err := c.nc.Publish(subject, ev); err != nil {
					t.Fatal(err)
				}
				c.refused(t, subject)
				js, err := jetstream.New(c.nc)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				if _, err := js.Publish(ctx, subject, ev); err == nil {
					t.Fatal("a JetStream publish of a forged event was acknowledged")
				}
				c.refused(t, subject)
			})
		}
	}
	if after := lastSeq(t, b); after != before {
		t.Fatalf("the log grew from %d to %d", before, after)
	}
	if got := status(t, sess); got != weft.StatusWaiting {
		t.Fatalf("the run is %s, want waiting", got)
	}
}

// Deleting or purging the log or the lease bucket, or one event, is
// refused to every lesser role; both still hold their data after.
func TestDeletingTheLogOrLeasesIsRefused(t *testing.T) {
	b := newBench(t)
	b.waiting(t)
	before := lastSeq(t, b)
	attacks := []struct{ name, subject, body string }{
		{"delete the log", "$JS.API.STREAM.DELETE.WEFT_EVENTS", ""},
		{"purge the log", "$JS.API.STREAM.PURGE.WEFT_EVENTS", "{}"},
		{"delete an event", "$JS.API.STREAM.MSG.DELETE.WEFT_EVENTS", `{"seq":1}`},
		{"reconfigure the log", "$JS.API.STREAM.UPDATE.WEFT_EVENTS", `{"name":"WEFT_EVENTS","subjects":["weft.evt.>"],"deny_delete":false,"deny_purge":false}`},
		{"delete the leases", "$JS.API.STREAM.DELETE.KV_weft_leases", ""},
		{"purge the leases", "$JS.API.STREAM.PURGE.KV_weft_leases", "{}"},
		{"write a lease", "$KV.weft_leases.forged", "n2"},
		{"delete the blob bucket", "$JS.API.STREAM.DELETE.OBJ_WEFT_EVENTS_BLOBS", ""},
		{"purge the blob bucket", "$JS.API.STREAM.PURGE.OBJ_WEFT_EVENTS_BLOBS", "{}"},
	}
	for _, r := range lesser() {
		for _, a := range attacks {
			t.Run(string(r)+"/"+a.name, func(t *testing.T) {
				c := b.conn(t, r)
				if err := c.nc.PublishRequest(a.subject, c.nc.NewInbox(), []byte(a.body)); err != nil {
					t.Fatal(err)
				}
				c.refused(t, a.subject)
			})
		}
	}
	// Through the JetStream client too (the delete never answers).
	c := b.conn(t, bus.RoleOperator)
	js, err := jetstream.New(c.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, "WEFT_EVENTS"); err == nil {
		t.Fatal("the operator deleted the log")
	}
	c.refused(t, "$JS.API.STREAM.DELETE.WEFT_EVENTS")
	if after := lastSeq(t, b); after != before {
		t.Fatalf("the log changed from %d to %d", before, after)
	}
	njs, err := jetstream.New(b.rt.Conn())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := njs.KeyValue(t.Context(), "weft_leases")
	if err != nil {
		t.Fatalf("the lease bucket: %v", err)
	}
	if _, err := kv.Get(t.Context(), "forged"); err == nil {
		t.Fatal("a forged lease was written")
	}
	if st, err := kv.Status(t.Context()); err != nil || st.Values() == 0 {
		t.Fatalf("the lease bucket lost its leases: %v, %v", st, err)
	}
}

// lastSeq is the log stream's last sequence, read by the node.
func lastSeq(t *testing.T, b *bench) uint64 {
	t.Helper()
	js, err := jetstream.New(b.rt.Conn())
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), "WEFT_EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// A role that may send a command names a reply subject outside the inboxes
// — a worker cancel, an event subject — to make the node, which may publish
// anywhere, answer there: the node drops such a command unanswered, so no
// cancel reaches the worker, the log stores nothing and the run still
// waits.
func TestCommandReplyOutsideTheInboxesIsDropped(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	cancelSubject, err := actors.WorkerCancelSubject(bus.Default, sess.ID(), res.RunID, res.Pending.Approvals[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	eventSubject, err := bus.Default.Event("session-"+sess.ID(), "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	w := b.conn(t, bus.RoleWorker)
	got := make(chan *nats.Msg, 16)
	if _, err := w.nc.ChanSubscribe(actors.WorkerCancelFilter(bus.Default), got); err != nil {
		t.Fatal(err)
	}
	w.allowed(t)
	before := lastSeq(t, b)
	c := b.conn(t, bus.RoleOperator)
	resume, err := bus.Default.Command(sess.ID(), actors.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	for _, reply := range []string{cancelSubject, eventSubject} {
		if err := c.nc.PublishRequest(resume, reply, []byte(`{"run_id":"`+res.RunID+`","decisions":[]}`)); err != nil {
			t.Fatal(err)
		}
	}
	c.allowed(t)
	// A command with an inbox reply, sent after them, is answered: the
	// node has handled the two before it.
	if reply := command(t, c, sess.ID(), actors.VerbResume, map[string]any{"run_id": res.RunID, "decisions": []any{}}); reply.Error == nil {
		t.Fatal("a resume without decisions was accepted")
	}
	if err := b.rt.Conn().Publish(cancelSubject, []byte("node")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if string(m.Data) != "node" {
			t.Fatalf("the worker got %q on %s, want only the node's cancel", m.Data, m.Subject)
		}
	case <-time.After(wait):
		t.Fatal("the worker got no cancel from the node")
	}
	// The log holds one more event: the refusal of the answered resume.
	if after := lastSeq(t, b); after != before+1 {
		t.Fatalf("the log grew from %d to %d, want one event (the answered resume's refusal)", before, after)
	}
	if got := status(t, sess); got != weft.StatusWaiting {
		t.Fatalf("the run is %s, want waiting", got)
	}
}
