package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// A client cut off mid-run that reconnects with Last-Event-ID gets exactly
// the events it missed, then the live ones: together, every event of the
// session once, in order, each with id: its log position.
func TestSessionEventsResume(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ref := f.start(t, "deploy")
	path := "/v1/sessions/" + ref.SessionID + "/events"
	s := f.stream(t, path, viewerToken)
	var got []uint64
	var last uint64
	// Read up to the run's wait for approval, then cut.
	for {
		ev := s.next(t)
		env := decode[envelope](t, []byte(ev.Data))
		if ev.ID != env.Position || ev.ID == 0 {
			t.Fatalf("id %d for an event at position %d", ev.ID, env.Position)
		}
		got, last = append(got, ev.ID), ev.ID
		if env.Type == string(events.TypeRunWaiting) {
			break
		}
	}
	s.close()
	// While cut off, the run resumes and completes.
	run := f.wait(t, ref)
	if code, b := f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/pending/"+run.Pending[0].ID+"/approve", approverToken, nil); code != http.StatusAccepted {
		t.Fatalf("approve: %d %s", code, b)
	}
	f.wait(t, ref)
	// Reconnect, then a second run adds live events.
	s = f.stream(t, path, viewerToken, "Last-Event-ID", strconv.FormatUint(last, 10))
	code, b := f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/runs", operatorToken, map[string]any{"prompt": "again"})
	if code != http.StatusAccepted {
		t.Fatalf("second start: %d %s", code, b)
	}
	second := decode[runRef](t, b)
	for {
		ev := s.next(t)
		env := decode[envelope](t, []byte(ev.Data))
		if ev.ID != env.Position {
			t.Fatalf("id %d for an event at position %d", ev.ID, env.Position)
		}
		got = append(got, ev.ID)
		if env.Type == string(events.TypeRunWaiting) && env.RunID == second.RunID {
			break
		}
	}
	evs, err := f.rt.Store().ReadStream(t.Context(), events.SessionStream(ref.SessionID), 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, ev := range evs {
		want = append(want, ev.Position)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("positions streamed (-log +stream):\n%s", diff)
	}
}

// ?after= resumes as Last-Event-ID does; a position that is not a number
// is refused.
func TestSessionEventsAfter(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ref := f.start(t, "deploy")
	f.wait(t, ref)
	evs, _ := f.rt.Store().ReadStream(t.Context(), events.SessionStream(ref.SessionID), 0)
	mid := evs[len(evs)/2]
	s := f.stream(t, "/v1/sessions/"+ref.SessionID+"/events?after="+strconv.FormatUint(mid.Position, 10), viewerToken)
	if ev := s.next(t); ev.ID != evs[len(evs)/2+1].Position {
		t.Fatalf("first event after %d: id %d, want %d", mid.Position, ev.ID, evs[len(evs)/2+1].Position)
	}
	if code, b := f.do(t, "GET", "/v1/sessions/"+ref.SessionID+"/events", viewerToken, nil, "Last-Event-ID", "x"); code != http.StatusBadRequest {
		t.Fatalf("bad Last-Event-ID: %d %s", code, b)
	}
}

// readFailure is a store whose reads of one stream fail.
type readFailure struct {
	events.Store
	stream string
}

var errRead = errors.New("injected read failure")

func (s readFailure) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	if stream == s.stream {
		return nil, errRead
	}
	return s.Store.ReadStream(ctx, stream, from)
}

// A session stream whose log cannot be read answers 503 before it
// starts, and the node logs why.
func TestSessionEventsReadFails(t *testing.T) {
	f := newFixture(t, fixtureOptions{store: func(s events.Store) events.Store {
		return readFailure{Store: s, stream: events.SessionStream("broken")}
	}})
	code, b := f.do(t, "GET", "/v1/sessions/broken/events", viewerToken, nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(b), errRead.Error()) {
		t.Fatalf("unreadable log: %d %s, want 503", code, b)
	}
	if logs := f.logs.String(); !strings.Contains(logs, errRead.Error()) {
		t.Fatalf("the failed read is not logged:\n%s", logs)
	}
}

// The all-sessions stream filters by type and by subject, and starts at
// the log's start with after=0.
func TestAllEventsFilter(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	a := f.start(t, "deploy")
	f.wait(t, a)
	b := f.start(t, "deploy")
	f.wait(t, b)
	s := f.stream(t, "/v1/events?after=0&type=run.*", viewerToken)
	for _, want := range []struct{ typ, session string }{{"run.started", a.SessionID}, {"run.waiting", a.SessionID}, {"run.started", b.SessionID}, {"run.waiting", b.SessionID}} {
		ev := s.next(t)
		var env struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &env); err != nil {
			t.Fatal(err)
		}
		if env.Type != want.typ || env.SessionID != want.session {
			t.Fatalf("event %s of %s, want %s of %s", env.Type, env.SessionID, want.typ, want.session)
		}
	}
	s.close()
	s = f.stream(t, "/v1/events?after=0&subject=weft.evt.session."+b.SessionID+".approval.>", viewerToken)
	ev := s.next(t)
	if !strings.Contains(ev.Data, `"approval.requested"`) || !strings.Contains(ev.Data, b.SessionID) {
		t.Fatalf("subject-filtered event: %s", ev.Data)
	}
	if code, body := f.do(t, "GET", "/v1/events?type=nothing.such", viewerToken, nil); code != http.StatusBadRequest {
		t.Fatalf("unknown type: %d %s", code, body)
	}
	// A subject filter that can match no event subject is refused, not
	// left to stream nothing.
	for _, bad := range []string{"session.*.run.>", "weft.evt.session", "weft.evt.>.run", ""} {
		code, body := f.do(t, "GET", "/v1/events?subject="+url.QueryEscape(bad), viewerToken, nil)
		if code != http.StatusBadRequest || !strings.Contains(string(body), "subject") {
			t.Errorf("subject %q: %d %s, want 400", bad, code, body)
		}
	}
}

// With deltas=true a session stream also carries the live output of a
// streaming model, as event: model.delta without an id, before the
// model.response that records it; without it, none.
func TestSessionEventsDeltas(t *testing.T) {
	f := newFixture(t, fixtureOptions{stream: true})
	const session = "delta-session"
	with := f.stream(t, "/v1/sessions/"+session+"/events?deltas=true", viewerToken)
	without := f.stream(t, "/v1/sessions/"+session+"/events", viewerToken)
	if code, b := f.do(t, "POST", "/v1/sessions/"+session+"/runs", operatorToken, map[string]any{"prompt": "deploy"}); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, b)
	}
	var args strings.Builder
	sawResponse := false
	for {
		ev := with.next(t)
		if ev.Event == "model.delta" {
			if ev.ID != 0 {
				t.Fatalf("a delta with id %d", ev.ID)
			}
			if sawResponse {
				t.Fatal("a delta after the model.response")
			}
			var d struct {
				Data events.ModelDelta `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatal(err)
			}
			for _, c := range d.Data.ToolCalls {
				args.WriteString(c.Arguments)
			}
			continue
		}
		env := decode[envelope](t, []byte(ev.Data))
		if env.Type == string(events.TypeModelResponse) {
			sawResponse = true
		}
		if env.Type == string(events.TypeRunWaiting) {
			break
		}
	}
	if args.String() != `{"env":"prod"}` {
		t.Fatalf("the deltas' arguments: %q", args.String())
	}
	for {
		ev := without.next(t)
		if ev.Event != "" {
			t.Fatalf("event %q on a stream without deltas", ev.Event)
		}
		if decode[envelope](t, []byte(ev.Data)).Type == string(events.TypeRunWaiting) {
			break
		}
	}
}
