package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// publishRaw stores body on subject in the event stream, bypassing the
// store (as a hand-written or foreign message would reach the log).
func publishRaw(t *testing.T, nc *nats.Conn, subject string, body []byte) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(t.Context(), subject, body)
	if err != nil {
		t.Fatalf("raw publish on %s: %v", subject, err)
	}
	return ack.Sequence
}

// A raw "not json" message on a session's ingest subject (what the stream
// stores) is quarantined:
// ReadAll and Subscribe yield it as a *events.PoisonError naming its
// stream and position and go on to the events after it; ReadStream of that
// session fails with it (the session is damaged); other sessions read as
// before.
func TestPoisonOnTheStreamSubject(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	nc := connect(t, startServer(t, bus.SyncPeriodic, ""))
	s := newStore(t, nc)
	damaged, sound := events.SessionStream("damaged"), events.SessionStream("sound")
	if _, err := s.Append(ctx, damaged, events.NoStream, progress(1)); err != nil {
		t.Fatal(err)
	}
	subject, err := bus.Default.LogIngest(damaged, string(events.TypeToolReturned))
	if err != nil {
		t.Fatal(err)
	}
	pos := publishRaw(t, nc, subject, []byte("not json"))
	if _, err := s.Append(ctx, sound, events.NoStream, progress(2), progress(3)); err != nil {
		t.Fatal(err)
	}

	checkPoison := func(what string, err error) {
		t.Helper()
		var p *events.PoisonError
		if !errors.As(err, &p) || !errors.Is(err, events.ErrPoison) || !errors.Is(err, events.ErrMalformed) {
			t.Fatalf("%s: %v, want a *events.PoisonError", what, err)
		}
		if p.Stream != damaged || p.Position != pos || p.SessionID() != "damaged" {
			t.Errorf("%s: poison %+v, want stream %q at position %d", what, p, damaged, pos)
		}
	}
	collect := func(what string, seq func(func(events.Event, error) bool), n int) {
		t.Helper()
		var got []uint64
		poison := 0
		for ev, err := range seq {
			if err != nil {
				checkPoison(what, err)
				poison++
			} else {
				got = append(got, ev.Position)
			}
			if len(got)+poison == n {
				break
			}
		}
		if poison != 1 || len(got) != n-1 || got[len(got)-1] != pos+2 {
			t.Errorf("%s: events at %v and %d poison, want the 3 events around one poison at %d", what, got, poison, pos)
		}
	}
	collect("ReadAll", s.ReadAll(ctx, 0), 4)
	collect("Subscribe", s.Subscribe(ctx, 0), 4)

	_, err = s.ReadStream(ctx, damaged, 0)
	checkPoison("ReadStream of the damaged session", err)
	if evs, err := s.ReadStream(ctx, sound, 0); err != nil || len(evs) != 2 {
		t.Errorf("ReadStream of the sound session: %d events, %v", len(evs), err)
	}
	if _, err := s.Append(ctx, sound, events.Exact(2), progress(4)); err != nil {
		t.Errorf("append to the sound session: %v", err)
	}
}
