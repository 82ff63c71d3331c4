package bus

import (
	"errors"
	"testing"
)

// The guard forwards a consumer request only with no deliver subject or
// one under the role's inbox, and a pool stream only with the pool's
// subjects and nothing that publishes or reads elsewhere.
func TestGuardDecide(t *testing.T) {
	l := DefaultLayout()
	pool := `{"name":"WEFT_WORKER_QUEUE","subjects":["weft.worker.queue.>"],"retention":"workqueue"}`
	for _, c := range []struct {
		name, subject, body, want string // want "" means refused
	}{
		{"pull consumer", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c1", `{"config":{"name":"c1"}}`, "$JS.API.CONSUMER.CREATE.WEFT_EVENTS.c1"},
		{"push to own inbox", "$WEFT.GUARD.reader.CONSUMER.CREATE.OBJ_WEFT_EVENTS_BLOBS", `{"config":{"deliver_subject":"_INBOX_reader.abc"}}`, "$JS.API.CONSUMER.CREATE.OBJ_WEFT_EVENTS_BLOBS"},
		{"durable pull", "$WEFT.GUARD.worker.CONSUMER.DURABLE.CREATE.WEFT_WORKER_QUEUE.p1", `{"config":{"durable_name":"p1"}}`, "$JS.API.CONSUMER.DURABLE.CREATE.WEFT_WORKER_QUEUE.p1"},
		{"push to the log", "$WEFT.GUARD.reader.CONSUMER.CREATE.OBJ_WEFT_EVENTS_BLOBS", `{"config":{"deliver_subject":"weft.log.session.x.run.started"}}`, ""},
		{"push to live events", "$WEFT.GUARD.operator.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{"deliver_subject":"weft.evt.session.x.run.completed"}}`, ""},
		{"push to a cancel", "$WEFT.GUARD.worker.CONSUMER.CREATE.WEFT_WORKER_QUEUE.c", `{"config":{"deliver_subject":"weft.worker.cancel.s.r.c"}}`, ""},
		{"push to another role's inbox", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{"deliver_subject":"_INBOX_worker.x"}}`, ""},
		{"push to an inbox prefix look-alike", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{"deliver_subject":"_INBOX_readerx.y"}}`, ""},
		{"push to the node inbox", "$WEFT.GUARD.worker.CONSUMER.CREATE.WEFT_WORKER_QUEUE.c", `{"config":{"deliver_subject":"_INBOX.n1.c"}}`, ""},
		{"not JSON", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":`, ""},
		{"a second value", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{}} {"config":{"deliver_subject":"weft.log.x"}}`, ""},
		{"an unknown field", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{"deliver_to":"weft.log.x"}}`, ""},
		{"a duplicate key", "$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c", `{"config":{"deliver_subject":"_INBOX_reader.x","deliver_subject":"weft.log.x"}}`, ""},
		{"node role", "$WEFT.GUARD.node.CONSUMER.CREATE.WEFT_EVENTS.c", `{}`, ""},
		{"unknown role", "$WEFT.GUARD.alice.CONSUMER.CREATE.WEFT_EVENTS.c", `{}`, ""},
		{"other call", "$WEFT.GUARD.reader.STREAM.DELETE.WEFT_EVENTS", `{}`, ""},
		{"other stream created", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_EVENTS", pool, ""},
		{"pool stream", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", pool, "$JS.API.STREAM.CREATE.WEFT_WORKER_QUEUE"},
		{"pool stream, explicit nulls", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue.>"],"mirror":null,"sources":null}`, "$JS.API.STREAM.CREATE.WEFT_WORKER_QUEUE"},
		{"pool stream republishing", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue.>"],"republish":{"src":">","dest":"weft.log.>"}}`, ""},
		{"pool stream sourcing", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue.>"],"sources":[{"name":"WEFT_EVENTS"}]}`, ""},
		{"pool stream mirroring", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"mirror":{"name":"WEFT_EVENTS"}}`, ""},
		{"pool stream transforming", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue.>"],"subject_transform":{"src":">","dest":"weft.evt.>"}}`, ""},
		{"pool stream of other subjects", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue.>","weft.cmd.>"]}`, ""},
		{"pool stream of the bare prefix", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"subjects":["weft.worker.queue."]}`, ""},
		{"pool stream without subjects", "$WEFT.GUARD.worker.STREAM.CREATE.WEFT_WORKER_QUEUE", `{"name":"WEFT_WORKER_QUEUE"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, body, err := l.guardDecide(c.subject, []byte(c.body))
			if c.want == "" {
				if !errors.Is(err, ErrGuardRefused) {
					t.Fatalf("guardDecide = %q, %v; want a refusal", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("guardDecide = %q, %v; want %q", got, err, c.want)
			}
			// What is forwarded is what was checked, decoded again.
			if again, _, err := l.guardDecide(c.subject, body); err != nil || again != got {
				t.Fatalf("the forwarded body %s decides %q, %v", body, again, err)
			}
		})
	}
}

// Every JetStream API call whose body names a subject the server publishes
// on goes through the guard, for every role that may make it.
func TestGuardedImports(t *testing.T) {
	l := DefaultLayout()
	for _, r := range Roles()[1:] {
		for _, im := range l.Imports(r) {
			if guarded(im.Local()) != (im.To != "") {
				t.Errorf("%s: import %+v: guarded %v", r, im, guarded(im.Local()))
			}
			if im.To != "" && im.Subject != GuardSubject(r, im.To) {
				t.Errorf("%s: import %+v is not the role's guard subject", r, im)
			}
		}
	}
}
