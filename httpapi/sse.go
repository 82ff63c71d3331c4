package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
)

// sseWriter writes Server-Sent Events.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE writes the headers of an event stream.
func startSSE(w http.ResponseWriter) (*sseWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	return s, s.rc.Flush()
}

// event writes one event: id (omitted when 0), type (omitted for the
// default "message") and its JSON data on one data line.
func (s *sseWriter) event(id uint64, typ string, data []byte) error {
	var b strings.Builder
	if id > 0 {
		fmt.Fprintf(&b, "id: %d\n", id)
	}
	if typ != "" {
		fmt.Fprintf(&b, "event: %s\n", typ)
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return err
	}
	return s.rc.Flush()
}

// comment writes an SSE comment (a keep-alive).
func (s *sseWriter) comment(text string) error {
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.rc.Flush()
}

// sendStored writes a stored event, its private surfaces redacted as on
// its live copy, with its log position as its id.
func (s *sseWriter) sendStored(ev events.Event) error {
	ev, err := events.Redact(ev)
	if err != nil {
		return err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return s.event(ev.Position, "", b)
}

// resumePosition returns where a stream resumes: the Last-Event-ID
// header's position, else the after query parameter; ok is false when
// neither is given.
func resumePosition(r *http.Request) (pos uint64, ok bool, err error) {
	v := r.Header.Get("Last-Event-ID")
	name := "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, false, nil
	}
	pos, err = strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q: want a log position (the id of the last event received)", name, v)
	}
	return pos, true, nil
}

// liveBuffer is how many live messages a stream holds for its client;
// past it, it reads what it missed from the log.
const liveBuffer = 1024

// resyncEvery is how often a stream that missed live copies reads them
// from the log when no later copy has shown the gap.
const resyncEvery = 200 * time.Millisecond

// gapWait bounds how long a session stream waits for the log to hold the
// events before a live copy it received; past it the stream ends, and the
// client's reconnect reads them from the log.
const gapWait = 5 * time.Second

// sessionEvents streams a session's events as SSE: every event after the
// client's Last-Event-ID (or ?after=; from the start without either), read
// from the log, then each new one live, with id: its log position; with
// ?deltas=true also the live model output as "event: model.delta" (no id:
// never stored). It subscribes to the live copies before it reads the
// log, sends each event once in version order, and reads the log again
// for any live copy it cannot send as it is (a gap in the versions, or a
// copy without its position).
func (a *API) sessionEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("session")
	stream := events.SessionStream(id)
	if err := events.ValidateStream(stream); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("session id %q: %v", id, err))
		return
	}
	after, _, err := resumePosition(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	subj := a.rt.Subjects()
	var fd feed
	if fd.events, err = subj.StreamEvents(stream); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if q := r.URL.Query().Get("deltas"); q != "" {
		on, err := strconv.ParseBool(q)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("deltas %q: want true or false", q))
			return
		}
		if on {
			if fd.deltas, err = subj.Delta(stream); err != nil {
				writeError(w, http.StatusBadRequest, "bad_request", err.Error())
				return
			}
		}
	}
	// One delivery of both subjects: a run's last deltas come before its
	// run.completed, as the node published them.
	live := newLiveClient(a.liveBuffer)
	leave, err := a.fanout.join(fd, live)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	defer leave()
	ctx := r.Context()
	f := &sessionFeed{a: a, stream: stream, lastPos: after}
	// The log is read before the stream answers: what a client does once
	// it has the answer (start a run) then comes live, its model output in
	// order with its events, rather than its events from this read ahead
	// of the output still queued.
	evs, err := f.readLog(ctx, 0)
	if err != nil {
		a.streamEnded(r, err) // the 503 alone tells only the client
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	sw, err := startSSE(w)
	if err != nil {
		return
	}
	if err := f.sendLog(sw, evs, 0); err != nil {
		a.streamEnded(r, err)
		return
	}
	tick := time.NewTicker(a.keepAlive)
	defer tick.Stop()
	resync := time.NewTicker(resyncEvery)
	defer resync.Stop()
	blobs, _ := a.rt.Store().(events.BlobStore)
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.done:
			return
		case <-tick.C:
			if err := sw.comment("keep-alive"); err != nil {
				return
			}
		case <-resync.C:
			// A live copy this stream missed (its buffer was full) shows
			// as a gap when the next one comes; the last ones of a burst
			// are read here.
			if live.missed.Swap(false) {
				if err := f.fromLogUpTo(ctx, sw, f.lastVer+1, 0); err != nil {
					a.streamEnded(r, err)
					return
				}
			}
		case m := <-live.ch:
			if m.delta {
				if err := sw.event(0, string(events.TypeModelDelta), m.data); err != nil {
					return
				}
				continue
			}
			if m.err != nil {
				continue // not an event: nothing of the log
			}
			if err := f.live(ctx, sw, m.ev, m.data, blobs); err != nil {
				a.streamEnded(r, err)
				return
			}
		}
	}
}

// sessionFeed is where a session stream stands: the last version and
// position it has sent (or skipped as at or before the resume position).
type sessionFeed struct {
	a       *API
	stream  string
	lastVer uint64
	lastPos uint64
}

// fromLogUpTo sends the stream's events from version from on that come
// after the last position sent, up to version upto (0: no bound), so that
// a read for one live copy does not send events whose live copies, and
// the model output published between them, are still to come.
func (f *sessionFeed) fromLogUpTo(ctx context.Context, sw *sseWriter, from, upto uint64) error {
	evs, err := f.readLog(ctx, from)
	if err != nil {
		return err
	}
	return f.sendLog(sw, evs, upto)
}

// readLog reads the stream's events from version from (none for a stream
// that does not exist yet).
func (f *sessionFeed) readLog(ctx context.Context, from uint64) ([]events.Event, error) {
	evs, err := f.a.rt.Store().ReadStream(ctx, f.stream, from)
	if errors.Is(err, events.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.stream, err)
	}
	return evs, nil
}

// sendLog sends the events of evs after the last version and position
// sent, up to version upto (0: no bound).
func (f *sessionFeed) sendLog(sw *sseWriter, evs []events.Event, upto uint64) error {
	for _, ev := range evs {
		if ev.Version <= f.lastVer {
			continue
		}
		if upto != 0 && ev.Version > upto {
			break
		}
		if ev.Position > f.lastPos {
			if err := sw.sendStored(ev); err != nil {
				return err
			}
			f.lastPos = ev.Position
		}
		f.lastVer = ev.Version
	}
	return nil
}

// live sends a live copy (ev, whose envelope is data): dropped when sent
// already, sent as it is (its blob resolved) when it
// is the next version and carries its position, otherwise read (with the
// events before it) from the log, waiting up to gapWait for the log to
// hold it.
func (f *sessionFeed) live(ctx context.Context, sw *sseWriter, ev events.Event, data []byte, blobs events.BlobStore) error {
	if ev.Version <= f.lastVer {
		return nil
	}
	if ev.Version == f.lastVer+1 && ev.Position > 0 {
		if ev.Position <= f.lastPos {
			f.lastVer = ev.Version
			return nil
		}
		if ev.Blob != nil {
			// Its data is a reference: send the data it refers to.
			if err := events.ResolveBlob(ctx, blobs, &ev); err != nil {
				return err
			}
			var err error
			if data, err = json.Marshal(ev); err != nil {
				return err
			}
		}
		if err := sw.event(ev.Position, "", data); err != nil {
			return err
		}
		f.lastVer, f.lastPos = ev.Version, ev.Position
		return nil
	}
	deadline := time.Now().Add(gapWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if err := f.fromLogUpTo(ctx, sw, f.lastVer+1, ev.Version); err != nil {
			return err
		}
		if f.lastVer >= ev.Version {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the log of %s does not hold version %d after %v", f.stream, ev.Version, gapWait)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// streamEnded logs why a stream ended early.
func (a *API) streamEnded(r *http.Request, err error) {
	if r.Context().Err() == nil {
		a.log.Warn("event stream ended", "path", r.URL.Path, "err", err)
	}
}
