package attacktests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
)

// The JetStream API answers on the reply subject its sender names. Each
// lesser role asks it (a stream info, a direct get of a stored event) to
// answer on the log's ingest subject, a live event subject, a worker
// cancel subject and a command subject: the answer lands in the role's own
// account — a second connection of the same role subscribed to the live
// event (or, for a worker, the cancel) subject receives it there — and
// nothing reaches the node account: the log stores nothing, no node
// subscriber on those subjects receives anything, no worker gets a cancel
// from another role, and the run still waits.
func TestJetStreamAnswersStayInTheRolesAccount(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	stream := "session-" + sess.ID()
	ingest, err := bus.Default.LogIngest(stream, "run.started")
	if err != nil {
		t.Fatal(err)
	}
	live, err := bus.Default.Event(stream, "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := actors.WorkerCancelSubject(bus.Default, sess.ID(), res.RunID, res.Pending.Approvals[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	resume, err := bus.Default.Command(sess.ID(), actors.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	// A node connection watches the attacked subjects (the run waits: the
	// node itself publishes nothing there).
	node := watch(t, b.rt.Conn(), ingest, live, cancel, resume)
	worker := b.conn(t, bus.RoleWorker)
	cancels := watch(t, worker.nc, actors.WorkerCancelFilter(bus.Default))
	before := lastSeq(t, b)

	readLog := []struct{ subject, body string }{{"$JS.API.STREAM.INFO.WEFT_EVENTS", ""}, {"$JS.API.DIRECT.GET.WEFT_EVENTS", `{"seq":1}`}}
	requests := map[bus.Role][]struct{ subject, body string }{
		bus.RoleReader:   readLog,
		bus.RoleApprover: readLog,
		bus.RoleOperator: readLog,
		bus.RoleWorker:   {{"$JS.API.INFO", ""}, {"$JS.API.STREAM.INFO.OBJ_WEFT_EVENTS_BLOBS", ""}},
	}
	for _, r := range lesser() {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			own := live
			if r == bus.RoleWorker {
				own = cancel
			}
			seen := watch(t, b.conn(t, r).nc, own)
			for _, req := range requests[r] {
				for _, reply := range []string{ingest, live, cancel, resume} {
					if err := c.nc.PublishRequest(req.subject, reply, []byte(req.body)); err != nil {
						t.Fatal(err)
					}
				}
				arrived(t, seen, own+" in the "+string(r)+" account")
			}
			c.allowed(t)
		})
		if r != bus.RoleWorker {
			// A worker's own answers land among the workers (see
			// README: a worker is trusted with the calls it is given).
			quiet(t, worker.nc, cancels)
		}
	}
	quiet(t, b.rt.Conn(), node)
	if after := lastSeq(t, b); after != before {
		t.Fatalf("the log grew from %d to %d", before, after)
	}
	if got := status(t, sess); got != weft.StatusWaiting || b.deploys.Load() != 0 {
		t.Fatalf("the run is %s with %d deploys, want waiting with none", got, b.deploys.Load())
	}
}

// A consumer whose deliver subject is on the log's ingest subjects, the
// live events or the worker cancels would make the server publish stored
// messages there in the node account: every lesser role's request for one
// is refused by the API guard, on every stream the role may create
// consumers on, and nothing reaches a node subscriber or a worker.
func TestConsumerDeliverSubjectOutsideTheInboxIsRefused(t *testing.T) {
	b := newBench(t)
	sess, res := b.waiting(t)
	stream := "session-" + sess.ID()
	ingest, err := bus.Default.LogIngest(stream, "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	live, err := bus.Default.Event(stream, "run.completed")
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := actors.WorkerCancelSubject(bus.Default, sess.ID(), res.RunID, res.Pending.Approvals[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	resume, err := bus.Default.Command(sess.ID(), actors.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	node := watch(t, b.rt.Conn(), ingest, live, cancel, resume)
	worker := b.conn(t, bus.RoleWorker)
	cancels := watch(t, worker.nc, actors.WorkerCancelFilter(bus.Default))
	// The pool stream exists, as a pool worker creates it.
	poolWorker(t, b)
	before := lastSeq(t, b)
	streams := map[bus.Role][]string{
		bus.RoleReader:   {"WEFT_EVENTS", "OBJ_WEFT_EVENTS_BLOBS"},
		bus.RoleApprover: {"WEFT_EVENTS", "OBJ_WEFT_EVENTS_BLOBS"},
		bus.RoleOperator: {"WEFT_EVENTS", "OBJ_WEFT_EVENTS_BLOBS"},
		bus.RoleWorker:   {"WEFT_WORKER_QUEUE", "OBJ_WEFT_EVENTS_BLOBS"},
	}
	for _, r := range lesser() {
		for _, st := range streams[r] {
			other := bus.RoleWorker.InboxPrefix() + ".x"
			if r == bus.RoleWorker {
				other = bus.RoleReader.InboxPrefix() + ".x"
			}
			for _, deliver := range []string{ingest, live, cancel, resume, "_INBOX.forged", r.InboxPrefix() + "x.y", other} {
				t.Run(string(r)+"/"+st+"/"+deliver, func(t *testing.T) {
					c := b.conn(t, r)
					for _, api := range []string{
						"$JS.API.CONSUMER.CREATE." + st + ".atk",
						"$JS.API.CONSUMER.CREATE." + st,
						"$JS.API.CONSUMER.DURABLE.CREATE." + st + ".atk",
					} {
						if !mayPublish(r, api) {
							continue
						}
						cfg := map[string]any{"deliver_subject": deliver, "ack_policy": "none"}
						if strings.Contains(api, ".atk") {
							cfg["name"] = "atk"
							if strings.Contains(api, "DURABLE") {
								cfg["durable_name"] = "atk"
							}
						}
						body, _ := json.Marshal(map[string]any{"stream_name": st, "config": cfg})
						ans := jsRequest(t, c, api, body)
						if ans.Error == nil || !strings.Contains(ans.Error.Description, "deliver subject") {
							t.Fatalf("%s %s with deliver subject %s: %+v, want the guard's refusal", r, api, deliver, ans)
						}
					}
					c.allowed(t)
				})
			}
		}
	}
	quiet(t, b.rt.Conn(), node)
	quiet(t, worker.nc, cancels)
	if after := lastSeq(t, b); after != before {
		t.Fatalf("the log grew from %d to %d", before, after)
	}
	if got := status(t, sess); got != weft.StatusWaiting || b.deploys.Load() != 0 {
		t.Fatalf("the run is %s with %d deploys, want waiting with none", got, b.deploys.Load())
	}
}

// A consumer that delivers to the role's own inbox is what the Object
// Store's reads create: it is accepted, and delivers into the role's
// account only.
func TestConsumerDeliverSubjectInTheInboxIsAccepted(t *testing.T) {
	b := newBench(t)
	b.waiting(t)
	for _, r := range lesser(bus.RoleWorker) {
		t.Run(string(r), func(t *testing.T) {
			c := b.conn(t, r)
			deliver := c.nc.NewInbox()
			got := watch(t, c.nc, deliver)
			body, _ := json.Marshal(map[string]any{"stream_name": "WEFT_EVENTS", "config": map[string]any{
				"name": "own-" + string(r), "deliver_subject": deliver, "ack_policy": "none", "deliver_policy": "all",
			}})
			ans := jsRequest(t, c, "$JS.API.CONSUMER.CREATE.WEFT_EVENTS.own-"+string(r), body)
			if ans.Error != nil {
				t.Fatalf("a push consumer on %s's inbox: %+v", r, ans.Error)
			}
			arrived(t, got, deliver)
			c.allowed(t)
		})
	}
}

// A pool stream created by a worker may not republish, source or mirror
// (which would make the server publish or read elsewhere in the node
// account) nor take other subjects than the pool's; the pool's own
// configuration is accepted (TestWorkerServesCalls).
func TestPoolStreamConfigurationIsChecked(t *testing.T) {
	b := startNode(t)
	c := b.conn(t, bus.RoleWorker)
	pool := map[string]any{"name": "WEFT_WORKER_QUEUE", "subjects": []string{"weft.worker.queue.>"}, "retention": "workqueue", "storage": "memory"}
	with := func(k string, v any) []byte {
		cfg := map[string]any{}
		for k, v := range pool {
			cfg[k] = v
		}
		cfg[k] = v
		b, _ := json.Marshal(cfg)
		return b
	}
	for name, body := range map[string][]byte{
		"republish":         with("republish", map[string]any{"src": ">", "dest": "weft.cmd.session.x.resume"}),
		"sources":           with("sources", []map[string]any{{"name": "OBJ_WEFT_EVENTS_BLOBS"}}),
		"mirror":            with("mirror", map[string]any{"name": "WEFT_EVENTS"}),
		"subject transform": with("subject_transform", map[string]any{"src": ">", "dest": "weft.log.>"}),
		"other subjects":    with("subjects", []string{"weft.worker.queue.>", "weft.other.>"}),
	} {
		t.Run(name, func(t *testing.T) {
			ans := jsRequest(t, c, "$JS.API.STREAM.CREATE.WEFT_WORKER_QUEUE", body)
			if ans.Error == nil || !strings.Contains(ans.Error.Description, "pool stream") {
				t.Fatalf("a pool stream with %s: %+v, want the guard's refusal", name, ans)
			}
		})
	}
	njs, err := b.rt.Conn().JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := njs.StreamInfo("WEFT_WORKER_QUEUE"); err == nil {
		t.Fatal("a refused pool stream was created")
	}
	c.allowed(t)
}

// jsAnswer is the part of a JetStream API answer the tests read.
type jsAnswer struct {
	Type  string `json:"type"`
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// jsRequest sends a JetStream API request as c and decodes the answer.
func jsRequest(t *testing.T, c *roleConn, subject string, body []byte) jsAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		t.Fatalf("%s %s: %v", c.role, subject, err)
	}
	var a jsAnswer
	if err := json.Unmarshal(m.Data, &a); err != nil {
		t.Fatalf("%s %s: answer %q: %v", c.role, subject, m.Data, err)
	}
	return a
}

// mayPublish reports whether role r's permissions allow publishing subject.
func mayPublish(r bus.Role, subject string) bool {
	for _, allow := range bus.DefaultLayout().Permissions(r).PublishAllow {
		if subjectMatches(subject, allow) {
			return true
		}
	}
	return false
}

// subjectMatches reports whether subject matches filter (* and >).
func subjectMatches(subject, filter string) bool {
	s, f := strings.Split(subject, "."), strings.Split(filter, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(s) == len(f)
}

// watch subscribes nc to subjects and returns what arrives (after a round
// trip, so the subscriptions are in place).
func watch(t *testing.T, nc *nats.Conn, subjects ...string) <-chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 256)
	for _, s := range subjects {
		sub, err := nc.ChanSubscribe(s, ch)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := nc.FlushTimeout(wait); err != nil {
		t.Fatal(err)
	}
	return ch
}

// arrived waits for one message on ch, at most wait.
func arrived(t *testing.T, ch <-chan *nats.Msg, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("nothing arrived on %s within %v", what, wait)
	}
}

// quiet checks that nothing arrived on ch, after a round trip of nc to
// the server: the server answers a ping after every message it delivered
// to nc before, and a channel subscription receives its messages in the
// order the connection reads them, so whatever the attacks, which were
// answered before, made the server publish to nc is in ch by then.
func quiet(t *testing.T, nc *nats.Conn, ch <-chan *nats.Msg) {
	t.Helper()
	if err := nc.FlushTimeout(wait); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-ch:
		t.Fatalf("%s reached the watching connection: %q", m.Subject, m.Data)
	default:
	}
}

// poolWorker creates the pool stream as a pool worker does.
func poolWorker(t *testing.T, b *bench) {
	t.Helper()
	c := b.conn(t, bus.RoleWorker)
	body, _ := json.Marshal(actors.WorkerQueueStreamConfig(bus.Default, 1))
	if ans := jsRequest(t, c, "$JS.API.STREAM.CREATE.WEFT_WORKER_QUEUE", body); ans.Error != nil {
		t.Fatalf("the pool stream: %+v", ans.Error)
	}
}
