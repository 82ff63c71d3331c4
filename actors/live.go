package actors

import (
	"sync"

	"github.com/weft-run/weft/events"
)

// liveQueue is how many appends' live copies may wait for the publisher
// before an append waits for it (backpressure, never a dropped copy).
const liveQueue = 4096

// livePublisher puts the live copies of appended events on their event
// subjects (weft.evt.session.<id>.<type>) from one goroutine of the host,
// in the order they were appended, so that an append does not wait for
// NATS. Whether anyone listens to a copy's subject (HostConfig.Interest)
// is asked in the appender's goroutine, right after the append: a copy
// nobody listens to is neither handed over nor built, so an append that
// nobody watches wakes no other goroutine. The log stays the source of
// truth: a reader that must not miss an event subscribes first, then
// reads the log, and drops the live copies it read already (RunStream,
// weft tail); an event appended before such a subscription is in that
// read, one appended after it finds the interest.
type livePublisher struct {
	h    *Host
	mu   sync.RWMutex // guards closed against a send on q after close
	q    chan []liveCopy
	done chan struct{}
	// closed: the host is closing; appends after it publish nothing.
	closed bool
}

func newLivePublisher(h *Host) *livePublisher {
	p := &livePublisher{h: h, q: make(chan []liveCopy, liveQueue), done: make(chan struct{})}
	go p.loop()
	return p
}

// liveCopy is a record to publish and its subject.
type liveCopy struct {
	rec     record
	subject string
}

// enqueue hands the records of one append that anyone listens to to the
// publisher.
func (p *livePublisher) enqueue(recs []record) {
	var out []liveCopy
	for i := range recs {
		if subject, ok := p.h.listened(&recs[i].Event); ok {
			if out == nil {
				out = make([]liveCopy, 0, len(recs)-i)
			}
			out = append(out, liveCopy{rec: recs[i], subject: subject})
		}
	}
	if len(out) == 0 {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.closed {
		p.q <- out
	}
}

// listened returns the subject of ev's live copy, and whether anyone
// listens to it (always, without HostConfig.Interest: an external server
// is not asked). A subject that cannot be built is logged, not published.
// The subject is asked about in a pooled buffer and made a string only
// when someone listens: most appends have no live reader.
func (h *Host) listened(ev *events.Event) (string, bool) {
	bp := subjectBufs.Get().(*[]byte)
	defer subjectBufs.Put(bp)
	b, err := h.subj.AppendEvent((*bp)[:0], ev.Stream, string(ev.Type))
	*bp = b
	if err != nil {
		h.log.Warn("event subject", "err", err)
		return "", false
	}
	if h.cfg.Interest != nil && !h.cfg.Interest(b) {
		return "", false
	}
	return string(b), true
}

// subjectBufs are the buffers listened builds subjects in.
var subjectBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// offer hands the publisher a record that is published and never
// recorded (live model output) on subject if it has room for it now, and
// reports whether it had: live output never makes the run wait.
func (p *livePublisher) offer(rec record, subject string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false
	}
	select {
	case p.q <- []liveCopy{{rec: rec, subject: subject}}:
		return true
	default:
		return false
	}
}

// close publishes what is queued and stops the publisher.
func (p *livePublisher) close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.q)
	}
	p.mu.Unlock()
	<-p.done
}

func (p *livePublisher) loop() {
	defer close(p.done)
	for copies := range p.q {
		for i := range copies {
			p.publish(&copies[i].rec, copies[i].subject)
		}
	}
}

// publish puts the live copy of rec, its private surfaces redacted
// (events.Redact), on subject. A copy that cannot be redacted is not
// published (fail closed).
func (p *livePublisher) publish(rec *record, subject string) {
	h := p.h
	live, err := events.Redact(rec.Event)
	if err != nil {
		h.log.Warn("event not published live", "stream", rec.Stream, "version", rec.Version, "err", err)
		return
	}
	b, err := encodeEnvelope(live)
	if err != nil {
		return
	}
	if err := h.cfg.Conn.Publish(subject, b); err != nil {
		// The log has the event; a subscriber misses its live copy.
		h.log.Warn("event not published live", "stream", rec.Stream, "version", rec.Version, "err", err)
	}
}

// encodeEnvelope returns the JSON envelope of ev, byte for byte what
// json.Marshal gives (see events.AppendJSON).
func encodeEnvelope(ev events.Event) ([]byte, error) {
	return events.AppendJSON(make([]byte, 0, events.SizeHint(&ev)), &ev, true)
}
