package jetstream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

func returnedEvent() events.Event {
	return events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeToolReturned, SessionID: "s",
		Data: []byte(`{"tool":"search","return":{"content":"found"},"attempt":1}`)}
}

// NewStream spares a new stream's first append the read of its head; told
// of a stream that has events after all (another process wrote it), the
// store cannot fork it: the server's fence refuses the append, nothing is
// stored, and the store reports the stream's version.
func TestNewStreamIsFenced(t *testing.T) {
	srv := startServer(t, bus.SyncPeriodic, "")
	ctx := context.Background()
	writer, other := newStore(t, connect(t, srv)), newStore(t, connect(t, srv))

	writer.NewStream("session-new")
	res, err := writer.Append(ctx, "session-new", events.NoStream, returnedEvent(), returnedEvent())
	if err != nil || res.LastVersion != 2 {
		t.Fatalf("append to a new stream: %+v, %v", res, err)
	}

	if _, err := other.Append(ctx, "session-taken", events.NoStream, returnedEvent()); err != nil {
		t.Fatal(err)
	}
	writer.NewStream("session-taken") // wrong: other wrote it
	_, err = writer.Append(ctx, "session-taken", events.NoStream, returnedEvent())
	var wv *events.WrongVersionError
	if !errors.As(err, &wv) || wv.Actual != 1 {
		t.Fatalf("append after a wrong NewStream: %v; want a WrongVersionError at version 1", err)
	}
	evs, err := writer.ReadStream(ctx, "session-taken", 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("the stream holds %d events (%v); want the other writer's one", len(evs), err)
	}
	if err := events.VerifyChain(evs); err != nil {
		t.Fatalf("chain after the refused append: %v", err)
	}
	// The store read the head after the refusal: the right append goes in.
	if res, err := writer.Append(ctx, "session-taken", events.Exact(1), returnedEvent()); err != nil || res.LastVersion != 2 {
		t.Fatalf("append at the stream's version: %+v, %v", res, err)
	}
}
