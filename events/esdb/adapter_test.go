package esdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	esdbclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/esdb"
	"github.com/weft-run/weft/events/esdb/esdbtest"
)

// rawClient returns a plain client of the protocol server, to look at what
// the store wrote and to write what the store would not.
func rawClient(t *testing.T, srv *esdbtest.Server) *esdbclient.Client {
	t.Helper()
	conf, err := esdbclient.ParseConnectionString(srv.ConnectionString())
	if err != nil {
		t.Fatal(err)
	}
	conf.Logger = esdbclient.NoopLogging()
	c, err := esdbclient.NewClient(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawStream reads a whole stream with the plain client.
func rawStream(t *testing.T, c *esdbclient.Client, stream string) []*esdbclient.RecordedEvent {
	t.Helper()
	rs, err := c.ReadStream(t.Context(), stream, esdbclient.ReadStreamOptions{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []*esdbclient.RecordedEvent
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %q: %v", stream, err)
		}
		out = append(out, re.OriginalEvent())
	}
}

// rawAppend appends one event with the plain client.
func rawAppend(t *testing.T, c *esdbclient.Client, stream, typ string, meta []byte) {
	t.Helper()
	_, err := c.AppendToStream(t.Context(), stream, esdbclient.AppendToStreamOptions{}, esdbclient.EventData{
		EventID: uuid.New(), EventType: typ, ContentType: esdbclient.ContentTypeJson, Data: []byte(`{}`), Metadata: meta,
	})
	if err != nil {
		t.Fatalf("raw append to %q: %v", stream, err)
	}
}

func collect(t *testing.T, seq func(func(events.Event, error) bool)) ([]events.Event, error) {
	t.Helper()
	var out []events.Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// TestEnvelopeRoundTrip: every envelope field survives, and lands where the
// package documentation says: id, type and data as EventStoreDB's, the rest
// in the JSON metadata; versions are revisions plus one and positions
// commit positions plus one.
func TestEnvelopeRoundTrip(t *testing.T) {
	s, srv := newTestStore(t)
	raw := rawClient(t, srv)
	at := time.Date(2025, 6, 1, 12, 30, 45, 123456789, time.UTC)
	in := []events.Event{{
		ID:            uuid.Must(uuid.NewV7()),
		Type:          events.TypeToolReturned,
		SchemaVersion: 1,
		Time:          at,
		SessionID:     "sess-1",
		RunID:         "run-2",
		ToolCallID:    "call-3",
		CorrelationID: "corr-4",
		CausationID:   "cause-5",
		Data:          json.RawMessage(`{"tool":"ok","return":[1,2]}`),
	}, {
		ID:   uuid.Must(uuid.NewV7()),
		Type: events.TypeRunStarted,
		Time: at,
	}}
	res, err := s.Append(t.Context(), "session-a", events.NoStream, in...)
	if err != nil {
		t.Fatal(err)
	}

	got, err := s.ReadStream(t.Context(), "session-a", 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := rawStream(t, raw, "session-a")
	if len(got) != 2 || len(recs) != 2 {
		t.Fatalf("read %d events through the store and %d raw, want 2", len(got), len(recs))
	}
	for i, rec := range recs {
		if rec.EventNumber != uint64(i) || got[i].Version != uint64(i)+1 {
			t.Errorf("event %d: revision %d, version %d; want %d and %d", i, rec.EventNumber, got[i].Version, i, i+1)
		}
		if got[i].Position != rec.Position.Commit+1 {
			t.Errorf("event %d: position %d, commit position %d; want commit+1", i, got[i].Position, rec.Position.Commit)
		}
		if rec.EventID != in[i].ID || rec.EventType != string(in[i].Type) || rec.ContentType != "application/json" {
			t.Errorf("event %d stored as id %s, type %q, content type %q", i, rec.EventID, rec.EventType, rec.ContentType)
		}
	}
	if string(recs[0].Data) != string(in[0].Data) {
		t.Errorf("data stored as %s, want %s", recs[0].Data, in[0].Data)
	}
	var meta map[string]any
	if err := json.Unmarshal(recs[0].UserMetadata, &meta); err != nil {
		t.Fatalf("metadata is not JSON: %v", err)
	}
	wantMeta := map[string]any{
		"schema_version": 1.0, "time": "2025-06-01T12:30:45.123456789Z", "session_id": "sess-1", "run_id": "run-2",
		"tool_call_id": "call-3", "correlation_id": "corr-4", "causation_id": "cause-5",
	}
	if appendID, _ := meta["append_id"].(string); uuid.Validate(appendID) != nil {
		t.Errorf("metadata append_id = %v, want a UUID", meta["append_id"])
	}
	delete(meta, "append_id")
	if diff := cmp.Diff(wantMeta, meta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}

	want := []events.Event{in[0], in[1]}
	for i := range want {
		want[i].Stream, want[i].Version, want[i].Position = "session-a", uint64(i)+1, recs[i].Position.Commit+1
	}
	want[1].SchemaVersion, _ = events.TypeRunStarted.SchemaVersion()
	want[1].PrevHash = events.Hash(want[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadStream (-want +got):\n%s", diff)
	}
	if res.LastPosition != want[1].Position || res.FirstVersion != 1 || res.LastVersion != 2 || res.Duplicate {
		t.Errorf("Append result %+v does not match the stored events", res)
	}
}

// TestExpectedVersionMapping: Exact(n) is revision n-1, checked by the
// server; the error carries the stream's actual version.
func TestExpectedVersionMapping(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := t.Context()
	if _, err := s.Append(ctx, "s", events.NoStream, newEvents(3)...); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		expected events.ExpectedVersion
		wantErr  bool
	}{
		{"exact below", events.Exact(2), true},
		{"exact above", events.Exact(4), true},
		{"no stream", events.NoStream, true},
		{"exact current", events.Exact(3), false},
		{"any", events.Any, false},
	}
	version := uint64(3)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Append(ctx, "s", tc.expected, newEvents(1)...)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Append: %v", err)
				}
				version++
				if res.LastVersion != version {
					t.Errorf("LastVersion %d, want %d", res.LastVersion, version)
				}
				return
			}
			var wv *events.WrongVersionError
			if !errors.As(err, &wv) || !errors.Is(err, events.ErrWrongExpectedVersion) {
				t.Fatalf("Append: %v, want a *WrongVersionError", err)
			}
			if diff := cmp.Diff(events.WrongVersionError{Stream: "s", Expected: tc.expected, Actual: version}, *wv, cmp.AllowUnexported(events.ExpectedVersion{})); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDuplicateUnderOtherExpectation: a batch retried under an expectation
// the server refuses is still recognised as stored, from the stream.
func TestDuplicateUnderOtherExpectation(t *testing.T) {
	s, srv := newTestStore(t)
	ctx := t.Context()
	batch := newEvents(2)
	orig, err := s.Append(ctx, "s", events.NoStream, batch...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", events.Exact(2), newEvents(2)...); err != nil {
		t.Fatal(err)
	}
	n := srv.Len()
	for _, expected := range []events.ExpectedVersion{events.Exact(1), events.Exact(3), events.NoStream, events.Any} {
		res, err := s.Append(ctx, "s", expected, batch...)
		if err != nil {
			t.Fatalf("re-append under %v: %v", expected, err)
		}
		want := orig
		want.Duplicate = true
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("re-append under %v (-want +got):\n%s", expected, diff)
		}
	}
	if srv.Len() != n {
		t.Errorf("the log grew from %d to %d events on re-appends", n, srv.Len())
	}
	// Under the stream's current version, EventStoreDB writes the batch
	// again (the limitation the package documentation states).
	res, err := s.Append(ctx, "s", events.Exact(4), batch...)
	if err != nil || res.Duplicate || res.FirstVersion != 5 {
		t.Errorf("re-append under the current version: %+v, %v; want a fresh write at version 5", res, err)
	}
	// A batch of which only a part is stored is a conflict, not a duplicate.
	partial := []events.Event{batch[1], newEvents(1)[0]}
	if _, err := s.Append(ctx, "s", events.Exact(1), partial...); !errors.Is(err, events.ErrWrongExpectedVersion) {
		t.Errorf("append of a half-stored batch: %v, want ErrWrongExpectedVersion", err)
	}
}

// TestErrorMapping: server answers and bad arguments become the port's
// typed errors.
func TestErrorMapping(t *testing.T) {
	srv := esdbtest.Start(t, esdbtest.Options{MaxAppendSize: 4 << 10})
	s, err := esdb.New(srv.ConnectionString(), esdb.WithMaxDataBytes(2<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	big := func(n int) events.Event {
		ev := newEvents(1)[0]
		ev.Data = json.RawMessage(`{"tool":"` + strings.Repeat("x", n-11) + `"}`)
		return ev
	}
	ctx := t.Context()
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"data over the store's limit", func() error {
			_, err := s.Append(ctx, "s", events.Any, big(2<<10+1))
			return err
		}, events.ErrPayloadTooLarge},
		{"batch over the server's limit", func() error {
			_, err := s.Append(ctx, "s", events.Any, big(2<<10), big(2<<10))
			return err
		}, events.ErrPayloadTooLarge},
		{"read of a missing stream", func() error {
			_, err := s.ReadStream(ctx, "missing", 0)
			return err
		}, events.ErrStreamNotFound},
		{"invalid stream on append", func() error {
			_, err := s.Append(ctx, "a b", events.Any, newEvents(1)...)
			return err
		}, events.ErrInvalidStream},
		{"invalid stream on read", func() error {
			_, err := s.ReadStream(ctx, "", 0)
			return err
		}, events.ErrInvalidStream},
		{"read all after a position inside an event", func() error {
			_, err := collect(t, s.ReadAll(ctx, 7))
			return err
		}, esdb.ErrInvalidPosition},
		{"subscribe after a position inside an event", func() error {
			_, err := collect(t, s.Subscribe(ctx, 7))
			return err
		}, esdb.ErrInvalidPosition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := s.ReadStream(ctx, "s", 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Errorf("refused appends wrote something: ReadStream: %v", err)
	}
}

// TestSystemAndForeignEvents: ReadAll and Subscribe skip system events;
// an event the backend did not write is a decoding error, not a silent
// default.
func TestSystemAndForeignEvents(t *testing.T) {
	s, srv := newTestStore(t)
	raw := rawClient(t, srv)
	ctx := t.Context()
	if _, err := s.Append(ctx, "a", events.NoStream, newEvents(1)...); err != nil {
		t.Fatal(err)
	}
	rawAppend(t, raw, "$stats-127.0.0.1:2113", "$statsCollected", nil)
	rawAppend(t, raw, "a-system-type", "$metadata", nil)
	if _, err := s.Append(ctx, "b", events.NoStream, newEvents(1)...); err != nil {
		t.Fatal(err)
	}
	all, err := collect(t, s.ReadAll(ctx, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := streamsOf(all); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("ReadAll streams %v, want [a b] (the server holds %d events)", got, srv.Len())
	}

	subCtx, cancel := context.WithCancel(ctx)
	var sub []events.Event
	for ev, err := range s.Subscribe(subCtx, 0) {
		if err != nil {
			break
		}
		if sub = append(sub, ev); len(sub) == 2 {
			cancel()
		}
	}
	cancel()
	if got := streamsOf(sub); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("Subscribe streams %v, want [a b]", got)
	}

	// A foreign event is poison: yielded as a *events.PoisonError naming
	// its stream, and the read goes on to the events after it.
	rawAppend(t, raw, "foreign", "order-placed", []byte(`{"user":"x"}`))
	if _, err := s.Append(ctx, "c", events.NoStream, newEvents(1)...); err != nil {
		t.Fatal(err)
	}
	var streams []string
	poison := 0
	for ev, err := range s.ReadAll(ctx, 0) {
		var p *events.PoisonError
		switch {
		case errors.As(err, &p):
			poison++
			if !errors.Is(err, events.ErrMalformed) || p.Stream != "foreign" || p.Version != 1 {
				t.Errorf("ReadAll over a foreign event: %v (%+v), want ErrMalformed naming stream foreign version 1", err, p)
			}
		case err != nil:
			t.Fatalf("ReadAll: %v", err)
		default:
			streams = append(streams, ev.Stream)
		}
	}
	if poison != 1 || !cmp.Equal(streams, []string{"a", "b", "c"}) {
		t.Errorf("ReadAll past a foreign event: streams %v and %d poison, want [a b c] and 1", streams, poison)
	}
	if _, err := s.ReadStream(ctx, "foreign", 0); !errors.Is(err, events.ErrPoison) {
		t.Errorf("ReadStream of the foreign stream: %v, want ErrPoison", err)
	}
}

// TestStreamPrefix: stores with different prefixes share a server without
// seeing each other's streams.
func TestStreamPrefix(t *testing.T) {
	srv := esdbtest.Start(t, esdbtest.Options{})
	raw := rawClient(t, srv)
	ctx := t.Context()
	stores := map[string]*esdb.Store{}
	for _, p := range []string{"tenant1-", "tenant2-"} {
		s, err := esdb.New(srv.ConnectionString(), esdb.WithStreamPrefix(p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[p] = s
		if _, err := s.Append(ctx, "orders", events.NoStream, newEvents(2)...); err != nil {
			t.Fatal(err)
		}
	}
	rawAppend(t, raw, "unrelated", "thing", []byte(`{}`))
	for p, s := range stores {
		if n := len(rawStream(t, raw, p+"orders")); n != 2 {
			t.Errorf("database stream %q has %d events, want 2", p+"orders", n)
		}
		all, err := collect(t, s.ReadAll(ctx, 0))
		if err != nil {
			t.Fatalf("%s ReadAll: %v", p, err)
		}
		if got := streamsOf(all); !cmp.Equal(got, []string{"orders", "orders"}) {
			t.Errorf("%s ReadAll streams %v, want its own two events", p, got)
		}
		subCtx, cancel := context.WithCancel(ctx)
		var sub []events.Event
		for ev, err := range s.Subscribe(subCtx, 0) {
			if err != nil {
				t.Fatalf("%s Subscribe: %v", p, err)
			}
			if sub = append(sub, ev); len(sub) == 2 {
				cancel()
				break
			}
		}
		cancel()
		if diff := cmp.Diff(all, sub); diff != "" {
			t.Errorf("%s Subscribe differs from ReadAll (-ReadAll +Subscribe):\n%s", p, diff)
		}
	}
	for _, bad := range []string{"", "$sys-", "a b"} {
		if _, err := esdb.New(srv.ConnectionString(), esdb.WithStreamPrefix(bad)); !errors.Is(err, events.ErrInvalidStream) {
			t.Errorf("WithStreamPrefix(%q): %v, want ErrInvalidStream", bad, err)
		}
	}
}

// TestNewFromClient: the store does not close a client it was given.
func TestNewFromClient(t *testing.T) {
	srv := esdbtest.Start(t, esdbtest.Options{})
	raw := rawClient(t, srv)
	s, err := esdb.NewFromClient(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), "a", events.NoStream, newEvents(1)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(rawStream(t, raw, "a")); n != 1 {
		t.Errorf("after the store closed, the client read %d events, want 1", n)
	}
}

func newEvents(n int) []events.Event {
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeToolProgress, Data: json.RawMessage(`{}`)}
	}
	return evs
}

func streamsOf(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Stream
	}
	return out
}
