package actors

import (
	"slices"
	"sync"

	"github.com/weft-run/weft/events"
)

// liveQueue is how many appends' live copies may wait for the publisher
// before an append waits for it (backpressure, never a dropped copy).
const liveQueue = 4096

// livePublisher puts the live copies of appended events on their event
// subjects (weft.evt.session.<id>.<type>) from one goroutine of the host,
// in the order they were appended, so that an append does not wait for
// NATS. A copy whose subject nobody listens to (HostConfig.Interest) is
// not built at all. The log stays the source of truth: a reader that
// must not miss an event subscribes first, then reads the log, and drops
// the live copies it read already (RunStream, weft tail).
type livePublisher struct {
	h    *Host
	mu   sync.RWMutex // guards closed against a send on q after close
	q    chan []record
	done chan struct{}
	// closed: the host is closing; appends after it publish nothing.
	closed bool
}

func newLivePublisher(h *Host) *livePublisher {
	p := &livePublisher{h: h, q: make(chan []record, liveQueue), done: make(chan struct{})}
	go p.loop()
	return p
}

// enqueue hands the records of one append to the publisher.
func (p *livePublisher) enqueue(recs []record) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.closed {
		p.q <- slices.Clone(recs)
	}
}

// offer hands the publisher a record that is published and never
// recorded (live model output) if it has room for it now, and reports
// whether it had: live output never makes the run wait.
func (p *livePublisher) offer(rec record) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false
	}
	select {
	case p.q <- []record{rec}:
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
	for recs := range p.q {
		for i := range recs {
			p.publish(&recs[i])
		}
	}
}

// publish puts the live copy of rec, its private surfaces redacted
// (events.Redact), on its subject (liveSubject) when anyone listens. A
// copy that cannot be redacted is not published (fail closed).
func (p *livePublisher) publish(rec *record) {
	h := p.h
	subject, err := h.liveSubject(&rec.Event)
	if err != nil {
		h.log.Warn("event subject", "err", err)
		return
	}
	if h.cfg.Interest != nil && !h.cfg.Interest(subject) {
		return
	}
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

// liveSubject is where ev's live copy goes: the session's delta subject
// for live output that is never recorded (weft.delta.session.<id>), its
// event subject otherwise (weft.evt.session.<id>.<type>).
func (h *Host) liveSubject(ev *events.Event) (string, error) {
	if ev.Type.LiveOnly() {
		return h.subj.Delta(ev.Stream)
	}
	return h.subj.Event(ev.Stream, string(ev.Type))
}

// encodeEnvelope returns the JSON envelope of ev, byte for byte what
// json.Marshal gives (see events.AppendJSON).
func encodeEnvelope(ev events.Event) ([]byte, error) {
	return events.AppendJSON(make([]byte, 0, events.SizeHint(&ev)), &ev, true)
}
