package attacktests

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/sync/errgroup"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// The JetStream names the role permissions protect are the ones the
// runtime uses.
func TestLayoutNamesTheRuntimesStreams(t *testing.T) {
	l := bus.DefaultLayout()
	for _, c := range []struct{ name, got, want string }{
		{"event stream", l.EventStream, jetstream.DefaultStreamName},
		{"blob bucket", l.BlobBucket, jetstream.BlobBucket(jetstream.DefaultStreamName)},
		{"lease bucket", l.LeaseBucket, actors.DefaultLeaseBucket},
		{"worker queue stream", l.WorkerQueueStream, actors.WorkerQueueStream(bus.Default)},
	} {
		if c.got != c.want {
			t.Errorf("%s: layout %q, runtime %q", c.name, c.got, c.want)
		}
	}
	call, err := actors.WorkerCallSubject(bus.Default, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(call, "x") + "> " + actors.WorkerQueueGroup
	if sub := l.Permissions(bus.RoleWorker).SubscribeAllow; !slices.Contains(sub, want) {
		t.Errorf("the worker may subscribe to %q, want %q (the call subjects in the runtime's queue group)", sub, want)
	}
}

// A reader reads the whole log and the live events, and an approval it
// watches arrives on its live subscription.
func TestReaderReadsTheLogAndLiveEvents(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	c := b.conn(t, bus.RoleReader)
	store, err := jetstream.New(t.Context(), c.nc)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	evs, err := store.ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("ReadStream = %d events, %v", len(evs), err)
	}
	n := 0
	for _, err := range store.ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < len(evs) {
		t.Fatalf("ReadAll read %d events, the session has %d", n, len(evs))
	}
	live := make(chan *nats.Msg, 64)
	if _, err := c.nc.ChanSubscribe(bus.Default.AllEvents(), live); err != nil {
		t.Fatal(err)
	}
	c.allowed(t)
	if _, err := sess.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "alice", nil)); err != nil {
		t.Fatal(err)
	}
	awaitEvent(t, live, events.TypeRunCompleted)
	c.allowed(t)
}

// Large event data lives in the log's blob bucket: every role that reads
// the log resolves it (a reader reads a 2 MB event a node appended).
func TestReaderResolvesLargeEvents(t *testing.T) {
	b := newBench(t)
	node, err := jetstream.New(t.Context(), b.conn(t, bus.RoleNode).nc)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	big := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t", Message: strings.Repeat("m", 2<<20)})
	res, err := node.Append(t.Context(), "session-big", events.NoStream, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Blobs) != 1 || res.Blobs[0] == nil {
		t.Fatalf("AppendResult.Blobs = %v, want the event by reference", res.Blobs)
	}
	for _, r := range []bus.Role{bus.RoleReader, bus.RoleApprover, bus.RoleOperator} {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			store, err := jetstream.New(t.Context(), c.nc)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			evs, err := store.ReadStream(t.Context(), "session-big", 0)
			if err != nil || len(evs) != 1 || len(evs[0].Data) != len(big.Data) {
				t.Fatalf("ReadStream = %d events, %v; want the 2 MB event resolved", len(evs), err)
			}
			c.allowed(t)
		})
	}
}

// An approver approves over the bus as weft approve does: the deploy runs.
func TestApproverApproves(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	c := b.conn(t, bus.RoleApprover)
	reply := command(t, c, sess.ID(), actors.VerbResume, map[string]any{"run_id": res.RunID, "decisions": []map[string]any{
		{"id": res.Pending.Approvals[0].ID, "action": "approve", "by": "alice"},
	}})
	if reply.Error != nil {
		t.Fatalf("resume refused: %+v", reply.Error)
	}
	done, err := sess.Wait(t.Context(), res.RunID)
	if err != nil || done.Status != weft.StatusCompleted || b.deploys.Load() != 1 {
		t.Fatalf("Wait = %+v, %v; %d deploys", done, err, b.deploys.Load())
	}
}

// An operator starts a run and cancels it over the bus.
func TestOperatorStartsAndCancels(t *testing.T) {
	b := newBench(t)
	c := b.conn(t, bus.RoleOperator)
	sess := b.agent.NewSession()
	reply := command(t, c, sess.ID(), actors.VerbStart, actors.StartCommand{RunID: "op-run", Agent: "deployer", Prompt: "deploy"})
	if reply.Error != nil {
		t.Fatalf("start refused: %+v", reply.Error)
	}
	waiting, err := sess.Wait(t.Context(), "op-run")
	if err != nil || waiting.Status != weft.StatusWaiting {
		t.Fatalf("Wait = %+v, %v", waiting, err)
	}
	reply = command(t, c, sess.ID(), actors.VerbCancel, actors.CancelCommand{RunID: "op-run", By: "olivia"})
	if reply.Error != nil {
		t.Fatalf("cancel refused: %+v", reply.Error)
	}
	if got := status(t, sess); got != weft.StatusCancelled {
		t.Fatalf("the run is %s, want cancelled", got)
	}
}

// A worker serves the calls of a remote tool, in the queue group and,
// pulling, in a pool.
func TestWorkerServesCalls(t *testing.T) {
	for _, pool := range []string{"", "p1"} {
		name := "queue group"
		if pool != "" {
			name = "pool"
		}
		t.Run(name, func(t *testing.T) {
			b := startNode(t)
			c := b.conn(t, bus.RoleWorker)
			var runs atomic.Int32
			deploy, err := toolsets.NewContextFunc("deploy", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
				runs.Add(1)
				return "deployed by the worker", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			opts := []worker.Option{worker.WithID("w-" + name)}
			if pool != "" {
				opts = append(opts, worker.WithPool(pool))
			}
			b.serveDeploy(t, c, deploy, opts...)
			sess, res := b.waiting(t)
			done, err := sess.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "alice", nil))
			if err != nil || done.Status != weft.StatusCompleted || done.Output != "deployed by the worker" || runs.Load() != 1 {
				t.Fatalf("Resume = %+v, %v; %d runs", done, err, runs.Load())
			}
			c.allowed(t)
		})
	}
}

// command sends a command over c as the weft command line does and
// returns the node's reply.
func command(t *testing.T, c *roleConn, sessionID, verb string, body any) actors.CommandReply {
	t.Helper()
	subject, err := bus.Default.Command(sessionID, verb)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		t.Fatalf("%s %s: %v", c.role, verb, err)
	}
	var reply actors.CommandReply
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		t.Fatal(err)
	}
	return reply
}

// awaitEvent waits for an event of type typ on a live subscription.
func awaitEvent(t *testing.T, ch <-chan *nats.Msg, typ events.Type) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m := <-ch:
			if ev, err := events.ParseEvent(m.Data); err == nil && ev.Type == typ {
				return
			}
		case <-timer.C:
			t.Fatalf("no live %s event within %v", typ, wait)
		}
	}
}

// A worker's result too large for a NATS message goes by reference to the
// log's blob bucket, which the worker role may write through its account's
// object-store imports, and reaches the log whole (a worker that could
// not write it would return the too-large error instead).
func TestWorkerWritesLargeResultsToTheBlobBucket(t *testing.T) {
	b := startNode(t)
	c := b.conn(t, bus.RoleWorker)
	size := int(c.nc.MaxPayload()) + 1024
	deploy, err := toolsets.NewContextFunc("deploy", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		return strings.Repeat("x", size), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.serveDeploy(t, c, deploy, worker.WithID("w-large"))
	sess, res := b.waiting(t)
	if _, err := sess.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "alice", nil)); err != nil {
		t.Fatal(err)
	}
	evs, err := b.rt.Store().ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- { // the last return: the first is the approval policy's
		ev := evs[i]
		if ev.Type != events.TypeToolReturned {
			continue
		}
		var d events.ToolReturned
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		var ret toolsets.Return
		if err := json.Unmarshal(d.Return, &ret); err != nil {
			t.Fatal(err)
		}
		var content string
		if err := json.Unmarshal(ret.Content, &content); err != nil || len(content) != size || ret.IsError {
			t.Fatalf("the log holds a return of %d bytes (error %v, %s), want the worker's %d", len(content), ret.IsError, ret.Content[:min(len(ret.Content), 200)], size)
		}
		c.allowed(t)
		return
	}
	t.Fatal("no tool.returned in the log")
}

// serveDeploy serves deploy from a worker on c until the test ends, and
// registers the agent "deployer" with it as its remote tool.
func (b *bench) serveDeploy(t *testing.T, c *roleConn, deploy toolsets.Tool, opts ...worker.Option) {
	t.Helper()
	w, err := worker.New(c.nc, []toolsets.Tool{deploy}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	var g errgroup.Group
	g.Go(func() error { return w.Serve(ctx) })
	t.Cleanup(func() {
		stop()
		if err := g.Wait(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	dctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	ts, err := b.rt.RemoteTools(dctx, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	b.addAgent(t, ts)
}
