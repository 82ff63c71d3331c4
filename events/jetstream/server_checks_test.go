package jetstream_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
)

// TestServerRefusesStaleWriter makes the server, not the store's own
// check, refuse a conflicting append: store b caches the head of a stream,
// store a appends to it, and b's append at the version it believes current
// must fail with ErrWrongExpectedVersion and write nothing.
func TestServerRefusesStaleWriter(t *testing.T) {
	ctx := t.Context()
	srv := startServer(t, bus.SyncPeriodic, "")
	a, b := newStore(t, connect(t, srv)), newStore(t, connect(t, srv))
	const stream = "session-s"
	if _, err := b.Append(ctx, stream, events.NoStream, progress(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, stream, events.Exact(1), progress(2), progress(3)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 4} { // a single event and an atomic batch
		evs := make([]events.Event, n)
		for i := range evs {
			evs[i] = progress(10 + i)
		}
		_, err := b.Append(ctx, stream, events.Exact(1), evs...)
		var wv *events.WrongVersionError
		if !errors.As(err, &wv) || wv.Actual != 3 {
			t.Fatalf("stale append of %d: err = %v, want WrongVersionError with Actual 3", n, err)
		}
	}
	got, err := a.ReadStream(ctx, stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("stream holds %d events, want 3", len(got))
	}
	// Any retries on the new head.
	res, err := b.Append(ctx, stream, events.Any, progress(5))
	if err != nil || res.LastVersion != 4 {
		t.Fatalf("Any after a stale cache: %+v, %v; want version 4", res, err)
	}
}

// TestBatchRefusedMidwayWritesNothing has the server refuse an atomic
// batch at its second message (an id already stored in another stream):
// no event of the batch is stored, and its other ids stay usable.
func TestBatchRefusedMidwayWritesNothing(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, connect(t, startServer(t, bus.SyncPeriodic, "")))
	taken := progress(0)
	if _, err := s.Append(ctx, "session-one", events.NoStream, taken); err != nil {
		t.Fatal(err)
	}
	first, third := progress(1), progress(3)
	_, err := s.Append(ctx, "session-two", events.NoStream, first, taken, third)
	if !errors.Is(err, events.ErrInvalidEvent) {
		t.Fatalf("batch with an id stored elsewhere: err = %v, want ErrInvalidEvent", err)
	}
	if _, err := s.ReadStream(ctx, "session-two", 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("ReadStream after the refused batch: err = %v, want ErrStreamNotFound", err)
	}
	res, err := s.Append(ctx, "session-two", events.NoStream, first, third)
	if err != nil || res.Duplicate || res.LastVersion != 2 {
		t.Fatalf("append of the refused batch's other ids: %+v, %v", res, err)
	}
}

// TestEventSubjects checks that every event is stored as a message on its
// stream's event subject and type, so plain NATS filters select by type,
// and that the store publishes it whole on the log's ingest subject only:
// a core subscriber to the event subjects never receives it (the runtime
// publishes a redacted live copy there, see events.Redact).
func TestEventSubjects(t *testing.T) {
	ctx := t.Context()
	srv := startServer(t, bus.SyncPeriodic, "")
	nc := connect(t, srv)
	s := newStore(t, nc)
	filter, err := bus.Default.EventsOfType("session", string(events.TypeToolReturned))
	if err != nil {
		t.Fatal(err)
	}
	live, err := nc.SubscribeSync(filter)
	if err != nil {
		t.Fatal(err)
	}
	ingest, err := nc.SubscribeSync(bus.Default.AllLogIngest())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	returned := events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeToolReturned, Data: []byte(`{"return":{"private_metadata":{"stack":"x"}}}`)}
	if _, err := s.Append(ctx, "session-x.y*>", events.NoStream, progress(1), returned); err != nil {
		t.Fatal(err)
	}

	// Stored under the event subject.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, jsstore.DefaultStreamName)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, filter)
	if err != nil {
		t.Fatalf("no stored message on %s: %v", filter, err)
	}
	if want := "weft.evt.session.x%2Ey%2A%3E.tool.returned"; msg.Subject != want {
		t.Errorf("stored subject = %q, want %q", msg.Subject, want)
	}
	if got := msg.Header.Get(nats.MsgIdHdr); got != returned.ID.String() {
		t.Errorf("Nats-Msg-Id = %q, want the event id %s", got, returned.ID)
	}
	typed, typ, err := bus.Default.ParseEvent(msg.Subject)
	if diff := cmp.Diff([]string{"session-x.y*>", "tool.returned"}, []string{typed, typ}); diff != "" || err != nil {
		t.Errorf("ParseEvent: %v (-want +got):\n%s", err, diff)
	}

	// Published whole on the ingest subject only.
	in, err := ingest.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "weft.log.session.x%2Ey%2A%3E.tool.progress"; in.Subject != want {
		t.Errorf("ingest subject = %q, want %q", in.Subject, want)
	}
	// A sentinel published after the append on the same connection
	// arrives after anything the append published on the event subjects.
	sentinel := "weft.evt.session.sentinel.tool.returned"
	if err := nc.Publish(sentinel, nil); err != nil {
		t.Fatal(err)
	}
	got, err := live.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != sentinel {
		t.Errorf("the store published %s on the event subjects: %s", got.Subject, got.Data)
	}
}
