package esdbtest

import (
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// record is one event in the in-memory transaction log. Every record is
// self-committed, as in a current EventStoreDB log: its commit and prepare
// positions are both its log position.
type record struct {
	id          uuid.UUID
	stream      string
	revision    uint64 // 0-based, within stream
	pos         uint64 // log position: commit == prepare
	eventType   string
	contentType string
	created     string // .NET ticks (100 ns) since the Unix epoch, decimal
	data        []byte
	meta        []byte // custom (user) metadata
}

// recordOverhead approximates the bytes a record takes in the log besides
// its variable parts, so that positions advance the way log positions do
// (by record size) and are not dense.
const recordOverhead = 83

// size is what a record adds to the log.
func (r *record) size() uint64 {
	return uint64(recordOverhead + 16 + len(r.stream) + len(r.eventType) + len(r.data) + len(r.meta))
}

// proposed is an event offered by an append.
type proposed struct {
	id          uuid.UUID
	eventType   string
	contentType string
	data        []byte
	meta        []byte
}

// expectation is the expected stream revision of an append, as on the wire.
type expectation struct {
	kind     expectKind
	revision uint64 // for expectRevision
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectStreamExists
	expectRevision
)

// outcome is the decision on an append, mirroring the commit check of
// EventStoreDB: written, idempotent (already written by an earlier append
// with the same event ids), or refused for the wrong expected version.
type outcome struct {
	kind outcomeKind
	// For written and idempotent: revisions and position of the last event.
	lastRevision uint64
	lastPos      uint64
	// For wrong: the stream's current revision, -1 when it has no events.
	current int64
}

type outcomeKind uint8

const (
	outcomeWritten outcomeKind = iota
	outcomeIdempotent
	outcomeWrong
	outcomeEmpty // an append of no events: nothing to do
)

// memLog is the in-memory transaction log: every record in log order, an
// index per stream and an index by event id (the idempotency check of
// appends with expected revision "any").
type memLog struct {
	mu      sync.Mutex
	records []*record
	streams map[string][]*record
	byID    map[uuid.UUID]*record
	head    uint64        // the next log position
	changed chan struct{} // closed and replaced after every write
	now     func() time.Time
}

func newLog(now func() time.Time) *memLog {
	return &memLog{
		streams: make(map[string][]*record),
		byID:    make(map[uuid.UUID]*record),
		changed: make(chan struct{}),
		now:     now,
	}
}

// current returns the stream's last revision, or -1 when it has no events.
// Callers hold l.mu.
func (l *memLog) current(stream string) int64 {
	return int64(len(l.streams[stream])) - 1
}

// append applies the commit check of EventStoreDB and writes the events
// when it passes:
//
//   - revision/no-stream: writes when the stream is at exactly that
//     revision; when the stream is past it and the events after it carry
//     the proposed ids in order, the append is idempotent; otherwise
//     wrong expected version (also when only some ids match: "corrupted
//     idempotency").
//   - any: idempotent when the first id is already in this stream and the
//     others follow it; written otherwise. (The real server looks ids up in
//     a bounded cache, so its "any" idempotency is best effort; this log
//     never forgets.)
//   - stream-exists: wrong expected version when the stream has no events;
//     otherwise as any.
func (l *memLog) append(stream string, exp expectation, evs []proposed) outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.current(stream)
	recs := l.streams[stream]
	if len(evs) == 0 {
		return outcome{kind: outcomeEmpty, current: cur}
	}

	switch exp.kind {
	case expectStreamExists:
		if cur < 0 {
			return outcome{kind: outcomeWrong, current: cur}
		}
		fallthrough
	case expectAny:
		first, ok := l.byID[evs[0].id]
		if !ok || first.stream != stream {
			break
		}
		if o, ok := l.idempotent(recs, int64(first.revision)-1, evs); ok {
			return o
		}
		return outcome{kind: outcomeWrong, current: cur}
	case expectNoStream, expectRevision:
		want := int64(-1)
		if exp.kind == expectRevision {
			want = int64(exp.revision)
		}
		switch {
		case want > cur:
			return outcome{kind: outcomeWrong, current: cur}
		case want < cur:
			if o, ok := l.idempotent(recs, want, evs); ok {
				return o
			}
			return outcome{kind: outcomeWrong, current: cur}
		}
	}

	created := strconv.FormatInt(l.now().UnixNano()/100, 10)
	var last *record
	for i, ev := range evs {
		r := &record{
			id:          ev.id,
			stream:      stream,
			revision:    uint64(cur + 1 + int64(i)),
			pos:         l.head,
			eventType:   ev.eventType,
			contentType: ev.contentType,
			created:     created,
			data:        slices.Clone(ev.data),
			meta:        slices.Clone(ev.meta),
		}
		l.head += r.size()
		l.records = append(l.records, r)
		l.streams[stream] = append(l.streams[stream], r)
		if _, seen := l.byID[r.id]; !seen {
			l.byID[r.id] = r
		}
		last = r
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return outcome{kind: outcomeWritten, lastRevision: last.revision, lastPos: last.pos}
}

// idempotent reports whether the events after revision after of recs carry
// the ids of evs, in order.
func (l *memLog) idempotent(recs []*record, after int64, evs []proposed) (outcome, bool) {
	for i, ev := range evs {
		rev := after + 1 + int64(i)
		if rev >= int64(len(recs)) || recs[rev].id != ev.id {
			return outcome{}, false
		}
	}
	last := recs[after+int64(len(evs))]
	return outcome{kind: outcomeIdempotent, lastRevision: last.revision, lastPos: last.pos}, true
}

// stream returns a copy of the stream's records (nil when it has none).
func (l *memLog) stream(name string) []*record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.streams[name])
}

// validPosition reports whether pos is a position a read can start from:
// the position of a record, or the end of the log or beyond.
func (l *memLog) validPosition(pos uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pos >= l.head {
		return true
	}
	i := sort.Search(len(l.records), func(i int) bool { return l.records[i].pos >= pos })
	return i < len(l.records) && l.records[i].pos == pos
}

// from returns up to max records with position >= pos (or > pos when
// exclusive) in log order, the end of the log, and the channel that is
// closed on the next write.
func (l *memLog) from(pos uint64, exclusive bool, max int) ([]*record, uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.records), func(i int) bool {
		if exclusive {
			return l.records[i].pos > pos
		}
		return l.records[i].pos >= pos
	})
	end := min(len(l.records), i+max)
	return slices.Clone(l.records[i:end]), l.head, l.changed
}

// before returns up to max records with position < pos, newest first.
func (l *memLog) before(pos uint64, max int) []*record {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.records), func(i int) bool { return l.records[i].pos >= pos })
	var out []*record
	for j := i - 1; j >= 0 && len(out) < max; j-- {
		out = append(out, l.records[j])
	}
	return out
}

// streamAfter returns up to max records of stream with revision > rev (all
// of them when rev is -1), and the channel closed on the next write.
func (l *memLog) streamAfter(stream string, rev int64, max int) ([]*record, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recs := l.streams[stream]
	start := min(int64(len(recs)), rev+1)
	end := min(int64(len(recs)), start+int64(max))
	return slices.Clone(recs[start:end]), l.changed
}

// headPosition returns the end of the log: the position the next record
// will take.
func (l *memLog) headPosition() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// lastPosition returns the position of the last record and true, or false
// for an empty log.
func (l *memLog) lastPosition() (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.records) == 0 {
		return 0, false
	}
	return l.records[len(l.records)-1].pos, true
}
