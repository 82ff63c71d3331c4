package esdbtest

import (
	"errors"
	"io"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func client(t *testing.T, s *Server) *esdb.Client {
	t.Helper()
	conf, err := esdb.ParseConnectionString(s.ConnectionString())
	if err != nil {
		t.Fatal(err)
	}
	conf.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func data(ids ...uuid.UUID) []esdb.EventData {
	out := make([]esdb.EventData, len(ids))
	for i, id := range ids {
		out[i] = esdb.EventData{EventID: id, EventType: "t", ContentType: esdb.ContentTypeJson, Data: []byte(`{}`)}
	}
	return out
}

// readAll reads the whole of $all from a position with the client.
func readAll(t *testing.T, c *esdb.Client, opts esdb.ReadAllOptions, count uint64) ([]*esdb.RecordedEvent, error) {
	t.Helper()
	rs, err := c.ReadAll(t.Context(), opts, count)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*esdb.RecordedEvent
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, re.OriginalEvent())
	}
}

func readStream(t *testing.T, c *esdb.Client, stream string, opts esdb.ReadStreamOptions, count uint64) ([]uint64, error) {
	t.Helper()
	rs, err := c.ReadStream(t.Context(), stream, opts, count)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var revs []uint64
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return revs, nil
		}
		if err != nil {
			return revs, err
		}
		revs = append(revs, re.OriginalEvent().EventNumber)
	}
}

// TestAppendRules: expected revisions and EventStoreDB's idempotency rules
// on a stream holding a, b, c at revisions 0, 1, 2.
func TestAppendRules(t *testing.T) {
	a, b, c, fresh := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	cases := []struct {
		name     string
		stream   string
		expected esdb.ExpectedRevision
		ids      []uuid.UUID
		wantRev  uint64 // revision of the last event, on success
		wantErr  bool
		writes   int
	}{
		{"no stream, same batch", "s", esdb.NoStream{}, []uuid.UUID{a, b}, 1, false, 0},
		{"revision, same batch after it", "s", esdb.Revision(0), []uuid.UUID{b, c}, 2, false, 0},
		{"revision, half the batch stored", "s", esdb.Revision(0), []uuid.UUID{b, fresh}, 0, true, 0},
		{"revision, batch stored elsewhere", "s", esdb.Revision(1), []uuid.UUID{b}, 0, true, 0},
		{"revision past the end", "s", esdb.Revision(5), []uuid.UUID{fresh}, 0, true, 0},
		{"any, stored batch", "s", esdb.Any{}, []uuid.UUID{b, c}, 2, false, 0},
		{"any, half the batch stored", "s", esdb.Any{}, []uuid.UUID{b, fresh}, 0, true, 0},
		{"any, new event", "s", esdb.Any{}, []uuid.UUID{fresh}, 3, false, 1},
		{"stream exists on a missing stream", "missing", esdb.StreamExists{}, []uuid.UUID{fresh}, 0, true, 0},
		{"stream exists", "s", esdb.StreamExists{}, []uuid.UUID{fresh}, 3, false, 1},
		{"current revision", "s", esdb.Revision(2), []uuid.UUID{fresh}, 3, false, 1},
		{"no stream on a new stream", "new", esdb.NoStream{}, []uuid.UUID{fresh}, 0, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, Options{NoSystemEvents: true})
			cl := client(t, s)
			if _, err := cl.AppendToStream(t.Context(), "s", esdb.AppendToStreamOptions{ExpectedRevision: esdb.NoStream{}}, data(a, b, c)...); err != nil {
				t.Fatal(err)
			}
			res, err := cl.AppendToStream(t.Context(), tc.stream, esdb.AppendToStreamOptions{ExpectedRevision: tc.expected}, data(tc.ids...)...)
			if tc.wantErr {
				var e *esdb.Error
				if !errors.As(err, &e) || e.Code() != esdb.ErrorCodeWrongExpectedVersion {
					t.Fatalf("append: %v, want wrong expected version", err)
				}
			} else {
				if err != nil {
					t.Fatalf("append: %v", err)
				}
				if res.NextExpectedVersion != tc.wantRev {
					t.Errorf("revision %d, want %d", res.NextExpectedVersion, tc.wantRev)
				}
			}
			if got := s.Len() - 3; got != tc.writes {
				t.Errorf("the append wrote %d events, want %d", got, tc.writes)
			}
		})
	}
}

// TestReads: stream and $all reads, forwards and backwards, and their
// starting points.
func TestReads(t *testing.T) {
	s := Start(t, Options{})
	cl := client(t, s)
	for range 4 {
		if _, err := cl.AppendToStream(t.Context(), "s", esdb.AppendToStreamOptions{}, data(uuid.New())...); err != nil {
			t.Fatal(err)
		}
	}
	all, err := readAll(t, cl, esdb.ReadAllOptions{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 || all[0].StreamID[0] != '$' {
		t.Fatalf("$all holds %d events starting with %q, want 3 system events and 4 of s", len(all), all[0].StreamID)
	}
	for i := 1; i < len(all); i++ {
		p, q := all[i-1].Position, all[i].Position
		if q.Commit <= p.Commit+1 || q.Commit != q.Prepare {
			t.Errorf("positions %v then %v: want commit == prepare, increasing by a record size", p, q)
		}
	}

	streamCases := []struct {
		name  string
		opts  esdb.ReadStreamOptions
		count uint64
		want  []uint64
	}{
		{"forwards from the start", esdb.ReadStreamOptions{}, 10, []uint64{0, 1, 2, 3}},
		{"forwards from a revision, counted", esdb.ReadStreamOptions{From: esdb.Revision(1)}, 2, []uint64{1, 2}},
		{"forwards from the end", esdb.ReadStreamOptions{From: esdb.End{}}, 10, nil},
		{"backwards from the end", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 3, []uint64{3, 2, 1}},
		{"backwards from a revision", esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.Revision(1)}, 10, []uint64{1, 0}},
	}
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readStream(t, cl, "s", tc.opts, tc.count)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("revisions (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("missing stream", func(t *testing.T) {
		_, err := readStream(t, cl, "nope", esdb.ReadStreamOptions{}, 10)
		var e *esdb.Error
		if !errors.As(err, &e) || e.Code() != esdb.ErrorCodeResourceNotFound {
			t.Errorf("read: %v, want resource not found", err)
		}
	})

	allCases := []struct {
		name  string
		opts  esdb.ReadAllOptions
		count uint64
		want  []*esdb.RecordedEvent
	}{
		{"forwards from a position includes it", esdb.ReadAllOptions{From: all[4].Position}, 100, all[4:]},
		{"forwards, counted", esdb.ReadAllOptions{From: all[1].Position}, 2, all[1:3]},
		{"forwards from the end", esdb.ReadAllOptions{From: esdb.End{}}, 100, nil},
		{"backwards from a position excludes it", esdb.ReadAllOptions{Direction: esdb.Backwards, From: all[2].Position}, 100, []*esdb.RecordedEvent{all[1], all[0]}},
		{"backwards from the end", esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1, all[6:]},
	}
	for _, tc := range allCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, cl, tc.opts, tc.count)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(tc.want), ids(got)); diff != "" {
				t.Errorf("event ids (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("position inside a record", func(t *testing.T) {
		mid := esdb.Position{Commit: all[1].Position.Commit + 1, Prepare: all[1].Position.Commit + 1}
		_, err := readAll(t, cl, esdb.ReadAllOptions{From: mid}, 10)
		if st, _ := status.FromError(errors.Unwrap(err)); st.Code() != codes.InvalidArgument {
			t.Errorf("read: %v, want invalid argument", err)
		}
	})
}

func ids(evs []*esdb.RecordedEvent) []uuid.UUID {
	var out []uuid.UUID
	for _, e := range evs {
		out = append(out, e.EventID)
	}
	return out
}

// TestSubscribeAll: confirmation, catch-up after the position (exclusive),
// CaughtUp, then live events; a filter with checkpoints; Close drops it.
func TestSubscribeAll(t *testing.T) {
	s := Start(t, Options{NoSystemEvents: true})
	cl := client(t, s)
	first := make([]uuid.UUID, 3)
	for i := range first {
		first[i] = uuid.New()
		if _, err := cl.AppendToStream(t.Context(), "s", esdb.AppendToStreamOptions{}, data(first[i])...); err != nil {
			t.Fatal(err)
		}
	}
	all, err := readAll(t, cl, esdb.ReadAllOptions{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cl.SubscribeToAll(t.Context(), esdb.SubscribeToAllOptions{From: all[0].Position})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []string
	next := func(sub *esdb.Subscription) {
		t.Helper()
		e := sub.Recv()
		switch {
		case e.EventAppeared != nil:
			got = append(got, e.EventAppeared.OriginalEvent().StreamID+":"+e.EventAppeared.OriginalEvent().EventID.String())
		case e.CaughtUp != nil:
			got = append(got, "caught up")
		case e.CheckPointReached != nil:
			got = append(got, "checkpoint")
		case e.SubscriptionDropped != nil:
			t.Fatalf("dropped: %v", e.SubscriptionDropped.Error)
		}
	}
	for range 3 {
		next(sub)
	}
	live := uuid.New()
	if _, err := cl.AppendToStream(t.Context(), "other", esdb.AppendToStreamOptions{}, data(live)...); err != nil {
		t.Fatal(err)
	}
	next(sub)
	want := []string{"s:" + first[1].String(), "s:" + first[2].String(), "caught up", "other:" + live.String()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscription (-want +got):\n%s", diff)
	}

	// Window 1: a checkpoint after every event considered, and one on
	// catching up.
	filtered, err := cl.SubscribeToAll(t.Context(), esdb.SubscribeToAllOptions{
		Filter: &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: []string{"other"}}, MaxSearchWindow: 1, From: esdb.Start{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer filtered.Close()
	got = nil
	for range 7 {
		next(filtered)
	}
	want = []string{"checkpoint", "checkpoint", "checkpoint", "other:" + live.String(), "checkpoint", "checkpoint", "caught up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("filtered subscription (-want +got):\n%s", diff)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if e := sub.Recv(); e.SubscriptionDropped == nil {
		t.Errorf("after Close the subscription received %+v, want a drop", e)
	}
}

// TestProtocolChecks: what the client always sends is required, and the
// append size is limited.
func TestProtocolChecks(t *testing.T) {
	s := Start(t, Options{MaxAppendSize: 100})
	conn, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	streams := api.NewStreamsClient(conn)
	id := &shared.UUID{Value: &shared.UUID_String_{String_: uuid.NewString()}}
	cases := []struct {
		name string
		meta map[string]string
		data []byte
		want string
	}{
		{"no type", map[string]string{"content-type": "application/json"}, nil, "Required Metadata Property 'type' is missing"},
		{"no content type", map[string]string{"type": "t"}, nil, "Required Metadata Property 'content-type' is missing"},
		{"too large", map[string]string{"type": "t", "content-type": "application/json"}, make([]byte, 101), "Maximum Append Size of 100 Exceeded."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call, err := streams.Append(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			msgs := []*api.AppendReq{
				{Content: &api.AppendReq_Options_{Options: &api.AppendReq_Options{
					StreamIdentifier:       &shared.StreamIdentifier{StreamName: []byte("s")},
					ExpectedStreamRevision: &api.AppendReq_Options_Any{Any: &shared.Empty{}},
				}}},
				{Content: &api.AppendReq_ProposedMessage_{ProposedMessage: &api.AppendReq_ProposedMessage{Id: id, Metadata: tc.meta, Data: tc.data}}},
			}
			for _, m := range msgs {
				if err := call.Send(m); err != nil {
					t.Fatal(err)
				}
			}
			_, err = call.CloseAndRecv()
			if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != tc.want {
				t.Errorf("append: %v, want InvalidArgument %q", err, tc.want)
			}
			if s.Len() != 3 {
				t.Errorf("log holds %d events, want the 3 system events", s.Len())
			}
		})
	}
}
