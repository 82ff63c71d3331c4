package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// TestSlowSubscriberDoesNotBlockAppends: appends complete while a
// subscriber sits in its loop body, and the subscriber then catches up.
func TestSlowSubscriberDoesNotBlockAppends(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	const n = 2000
	first := events.MustNew(events.TypeToolProgress, nil)
	if _, err := s.Append(ctx, "s", events.NoStream, first); err != nil {
		t.Fatal(err)
	}

	inBody := make(chan struct{})
	release := make(chan struct{})
	got := make(chan int, 1)
	go func() {
		count := 0
		for _, err := range s.Subscribe(ctx, 0) {
			if err != nil {
				break
			}
			if count++; count == 1 {
				close(inBody)
				<-release // a slow consumer
			}
			if count == n+1 {
				break
			}
		}
		got <- count
	}()
	<-inBody

	appended := make(chan error, 1)
	go func() {
		for range n {
			if _, err := s.Append(ctx, "s", events.Any, events.MustNew(events.TypeToolProgress, nil)); err != nil {
				appended <- err
				return
			}
		}
		appended <- nil
	}()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("appends blocked behind a subscriber that is not reading")
	}
	close(release)
	if count := <-got; count != n+1 {
		t.Errorf("subscriber got %d events, want %d", count, n+1)
	}
}

// TestReturnedEventsAreCopies: changing the Data of appended or read
// events does not change the store.
func TestReturnedEventsAreCopies(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	ev := events.MustNew(events.TypeToolReturned, events.ToolReturned{Tool: "t"})
	want := bytes.Clone(ev.Data)
	if _, err := s.Append(ctx, "s", events.NoStream, ev); err != nil {
		t.Fatal(err)
	}
	ev.Data[0] = 'X'
	read, err := s.ReadStream(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	read[0].Data[0] = 'Y'
	for got, err := range s.ReadAll(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got.Data[1] = 'Z'
	}
	again, _ := s.ReadStream(ctx, "s", 0)
	if !bytes.Equal(again[0].Data, want) {
		t.Errorf("stored data changed to %s, want %s", again[0].Data, want)
	}
}

// TestPartialReAppend: a batch that repeats only some stored ids is
// refused, not half-deduplicated.
func TestPartialReAppend(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	a, b := events.MustNew(events.TypeToolProgress, nil), events.MustNew(events.TypeToolProgress, nil)
	if _, err := s.Append(ctx, "s", events.NoStream, a); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		stream string
		evs    []events.Event
	}{
		{"stored id and a new one", "s", []events.Event{a, b}},
		{"new id then a stored one", "s", []events.Event{b, a}},
		{"stored id in another stream", "t", []events.Event{a}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Append(ctx, tc.stream, events.Any, tc.evs...); !errors.Is(err, events.ErrInvalidEvent) {
				t.Errorf("Append: %v, want ErrInvalidEvent", err)
			}
		})
	}
	if evs, _ := s.ReadStream(ctx, "s", 0); len(evs) != 1 {
		t.Errorf("stream has %d events, want 1", len(evs))
	}
}

func TestCancelledContext(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Append(ctx, "s", events.Any, events.MustNew(events.TypeToolProgress, nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Append: %v, want context.Canceled", err)
	}
	if _, err := s.ReadStream(ctx, "s", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadStream: %v, want context.Canceled", err)
	}
	for _, err := range s.ReadAll(ctx, 0) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ReadAll: %v, want context.Canceled", err)
		}
	}
}

// TestLogAcrossBlocks appends more events than two blocks of the global
// log hold, over three streams, and reads them back in both orders: every
// event at its position, each stream in version order, the chain intact.
func TestLogAcrossBlocks(t *testing.T) {
	s := memstore.New()
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	const n = 2*4096 + 37
	streams := []string{"a", "b", "c"}
	for i := range n {
		ev := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "t" + strconv.Itoa(i)})
		if _, err := s.Append(ctx, streams[i%3], events.Any, ev); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for ev, err := range s.ReadAll(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Position != uint64(i+1) || ev.Stream != streams[i%3] || string(ev.Data) != `{"tool":"t`+strconv.Itoa(i)+`"}` {
			t.Fatalf("event %d: position %d, stream %q, data %s", i, ev.Position, ev.Stream, ev.Data)
		}
		i++
	}
	if i != n {
		t.Fatalf("ReadAll returned %d events, want %d", i, n)
	}
	for k, stream := range streams {
		evs, err := s.ReadStream(ctx, stream, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if want := (n-k+2)/3 - 1999; len(evs) != want {
			t.Fatalf("stream %s from version 2000: %d events, want %d", stream, len(evs), want)
		}
		for j, ev := range evs {
			if ev.Version != uint64(2000+j) || ev.Position != uint64(3*(1999+j)+k+1) {
				t.Fatalf("stream %s event %d: version %d position %d", stream, j, ev.Version, ev.Position)
			}
		}
		all, err := s.ReadStream(ctx, stream, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := events.VerifyChain(all); err != nil {
			t.Errorf("stream %s: %v", stream, err)
		}
	}
}
