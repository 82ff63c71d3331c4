// Package memstore is an in-memory events.Store for unit tests and
// single-process tools. It keeps every event in memory until the store is
// garbage collected; nothing is durable.
//
// Data longer than the inline limit (events.DefaultInlineBytes unless
// WithInlineBytes says otherwise) is kept in the store's own in-memory blob
// store (the store is an events.BlobStore), and the event holds a reference
// to it, as every backend with a blob store does (see "Large payloads" in
// the events package); reads resolve it.
//
// Positions are dense (the n-th event appended to the store has Position
// n). Live subscribers are woken by a broadcast that never blocks an
// appender: a slow subscriber only falls behind and catches up by reading
// the log, it never holds up a writer.
package memstore

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

var (
	_ events.Store     = (*Store)(nil)
	_ events.BlobStore = (*Store)(nil)
)

// chunk is how many events a reader copies out per lock acquisition.
const chunk = 256

// Store is an in-memory event store. Create one with New; the zero value is
// not usable.
type Store struct {
	maxData int
	keys    *events.ChainKeys // keys the chain when set
	inline  int

	bmu   sync.Mutex
	blobs map[string][]byte // sha256 hex → content

	mu      sync.Mutex
	all     eventLog                // the global log; all.at(p).Position == p
	streams map[string]*streamIndex // one map probe per append finds all a stream's state
	ids     map[uuid.UUID]uint64    // event id → position
	changed chan struct{}           // closed by the next append; nil until a reader waits for one
	closed  bool
	done    chan struct{} // closed by Close
}

// Option configures a Store.
type Option func(*Store)

// WithMaxDataBytes sets the largest event Data the store accepts; larger
// Data is refused with events.ErrPayloadTooLarge. n <= 0 means
// events.DefaultMaxBlobDataBytes (64 MiB), the default.
func WithMaxDataBytes(n int) Option {
	return func(s *Store) {
		if n <= 0 {
			n = events.DefaultMaxBlobDataBytes
		}
		s.maxData = n
	}
}

// WithChainKeys keys the chain of every appended event with the current
// key of ks (see events.ChainKey): without it, events are unkeyed.
func WithChainKeys(ks *events.ChainKeys) Option {
	return func(s *Store) { s.keys = ks }
}

// WithInlineBytes sets the largest Data kept in the event itself; longer
// Data goes to the store's blob store. n <= 0 means
// events.DefaultInlineBytes (256 KiB), the default.
func WithInlineBytes(n int) Option {
	return func(s *Store) {
		if n <= 0 {
			n = events.DefaultInlineBytes
		}
		s.inline = n
	}
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		maxData: events.DefaultMaxBlobDataBytes,
		inline:  events.DefaultInlineBytes,
		blobs:   make(map[string][]byte),
		streams: make(map[string]*streamIndex),
		ids:     make(map[uuid.UUID]uint64),
		done:    make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// batches are the arrays Append prepares batches in (it copies each
// event into the log). An array longer than maxPooledBatch is not kept.
var batches = sync.Pool{New: func() any { return new([]events.Event) }}

// maxPooledBatch is the capacity past which Append lets a batch array go
// rather than keep it in batches for every later append.
const maxPooledBatch = 64

// Append implements events.Appender. It does not block beyond taking the
// store's lock.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: err}
	}
	if s.isClosed() {
		return events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: events.ErrClosed}
	}
	bp := batches.Get().(*[]events.Event)
	defer func() {
		if cap(*bp) > maxPooledBatch {
			return
		}
		// Let the events' data go: PrepareAppendInto wrote at most
		// len(evs) events, into this array only when they fitted.
		clear((*bp)[:min(len(evs), cap(*bp))])
		batches.Put(bp)
	}()
	batch, err := events.PrepareAppendInto(*bp, stream, evs, s.maxData)
	if err != nil {
		return events.AppendResult{}, err
	}
	*bp = batch
	refs, err := events.OffloadBlobs(ctx, s, stream, batch, s.inline)
	if err != nil {
		return events.AppendResult{}, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: events.ErrClosed}
	}
	if res, dup, err := s.duplicateLocked(stream, batch); dup || err != nil {
		return res, err
	}
	st := s.streams[stream]
	var current uint64
	var prev string
	if st != nil {
		current, prev = uint64(len(st.positions)), st.hash
	}
	if !expected.Matches(current) {
		return events.AppendResult{}, &events.WrongVersionError{Stream: stream, Expected: expected, Actual: current}
	}
	hashes := events.ChainHashes(batch, current, prev, s.chainKey())
	if st == nil {
		// A new stream: room for a run's events, grown from there.
		st = &streamIndex{positions: make([]uint64, 0, max(16, len(batch)))}
		s.streams[stream] = st
	}
	st.hash = hashes[len(hashes)-1]
	positions := st.positions
	for i := range batch {
		ev := &batch[i]
		ev.Position = s.all.len() + 1
		stored := s.all.add()
		*stored = *ev
		if ev.Blob != nil {
			// Kept as a backend keeps it: the reference in place of
			// the content, resolved by the reads.
			stored.Data, stored.Blob = ev.Blob.EventData(), nil
		}
		positions = append(positions, ev.Position)
		s.ids[ev.ID] = ev.Position
	}
	st.positions = positions
	if s.changed != nil {
		close(s.changed)
		s.changed = nil // made again when a reader waits (copyChunk)
	}
	return events.AppendResult{
		FirstVersion: batch[0].Version,
		LastVersion:  batch[len(batch)-1].Version,
		LastPosition: batch[len(batch)-1].Position,
		Blobs:        refs,
		Hashes:       hashes,
	}, nil
}

// duplicateLocked reports whether batch is a re-append of events already in
// stream, and if so the original result. A batch that shares only some ids
// with stored events, or stores them elsewhere or in another order, is
// refused with ErrInvalidEvent.
func (s *Store) duplicateLocked(stream string, batch []events.Event) (events.AppendResult, bool, error) {
	var stored []events.Event
	for _, ev := range batch {
		if pos, ok := s.ids[ev.ID]; ok {
			stored = append(stored, *s.all.at(pos))
		}
	}
	if len(stored) == 0 {
		return events.AppendResult{}, false, nil
	}
	for i, old := range stored {
		if len(stored) != len(batch) || old.Stream != stream || old.Version != stored[0].Version+uint64(i) || old.ID != batch[i].ID {
			return events.AppendResult{}, false, &events.Error{Op: "append", Stream: stream, Err: fmt.Errorf(
				"%w: event id %s is already stored (stream %q, version %d) and the batch is not a re-append of stored events",
				events.ErrInvalidEvent, old.ID, old.Stream, old.Version)}
		}
	}
	last := stored[len(stored)-1]
	return events.AppendResult{
		FirstVersion: stored[0].Version,
		LastVersion:  last.Version,
		LastPosition: last.Position,
		Duplicate:    true,
		Hashes:       events.StoredHashes(stored),
	}, true, nil
}

// ReadStream implements events.Reader.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: err}
	}
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	out, err := s.copyStream(stream, from)
	if err != nil {
		return nil, err
	}
	if err := s.resolve(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// copyStream copies the events of stream with Version >= from.
func (s *Store) copyStream(stream string, from uint64) ([]events.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: events.ErrClosed}
	}
	st, ok := s.streams[stream]
	if !ok {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: events.ErrStreamNotFound}
	}
	positions := st.positions
	from = max(from, 1)
	if from > uint64(len(positions)) {
		return []events.Event{}, nil
	}
	out := make([]events.Event, 0, uint64(len(positions))-from+1)
	for _, pos := range positions[from-1:] {
		out = append(out, clone(*s.all.at(pos)))
	}
	return out, nil
}

// ReadAll implements events.Reader. It copies events out in chunks, so it
// never holds the store's lock while the loop body runs; events appended
// while it reads may or may not be included.
func (s *Store) ReadAll(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		next := after
		var buf []events.Event // the chunk's copies, reused: yield gets each by value
		for {
			evs, _, err := s.readChunk(ctx, "read all", next, buf)
			if err != nil {
				yield(events.Event{}, err)
				return
			}
			if len(evs) == 0 {
				return
			}
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			next, buf = evs[len(evs)-1].Position, evs
		}
	}
}

// Subscribe implements events.Subscriber. It reads the log in chunks like
// ReadAll and, once caught up, waits for the next append's broadcast, the
// context, or Close (which ends it with ErrClosed).
func (s *Store) Subscribe(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		next := after
		var buf []events.Event // as in ReadAll
		for {
			evs, changed, err := s.readChunk(ctx, "subscribe", next, buf)
			if err != nil {
				yield(events.Event{}, err)
				return
			}
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			if len(evs) > 0 {
				next, buf = evs[len(evs)-1].Position, evs
				continue
			}
			select {
			case <-changed:
			case <-ctx.Done():
				yield(events.Event{}, ctx.Err())
				return
			case <-s.done:
				yield(events.Event{}, &events.Error{Op: "subscribe", Err: events.ErrClosed})
				return
			}
		}
	}
}

// readChunk copies up to chunk events with Position > after, their blob
// references resolved. With none to return it also returns the channel the
// next append will close.
func (s *Store) readChunk(ctx context.Context, op string, after uint64, buf []events.Event) ([]events.Event, <-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out, changed, err := s.copyChunk(op, after, buf)
	if err != nil || len(out) == 0 {
		return nil, changed, err
	}
	if err := s.resolve(ctx, out); err != nil {
		return nil, nil, &events.Error{Op: op, Err: err}
	}
	return out, nil, nil
}

// copyChunk copies the events of readChunk into buf when it has room.
func (s *Store) copyChunk(op string, after uint64, buf []events.Event) ([]events.Event, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, &events.Error{Op: op, Err: events.ErrClosed}
	}
	if after >= s.all.len() {
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		return nil, s.changed, nil
	}
	last := min(after+chunk, s.all.len())
	out := buf[:0]
	if uint64(cap(out)) < last-after {
		out = make([]events.Event, 0, last-after)
	}
	for pos := after + 1; pos <= last; pos++ {
		out = append(out, clone(*s.all.at(pos)))
	}
	return out, nil, nil
}

// resolve replaces the blob references of evs by their content. It is
// called without s.mu held.
func (s *Store) resolve(ctx context.Context, evs []events.Event) error {
	for i := range evs {
		if err := events.ResolveBlob(ctx, s, &evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// PutBlob implements events.BlobStore.
func (s *Store) PutBlob(ctx context.Context, data []byte) (events.BlobRef, error) {
	if err := ctx.Err(); err != nil {
		return events.BlobRef{}, err
	}
	ref := events.RefOf(data)
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if _, ok := s.blobs[ref.SHA256]; !ok {
		s.blobs[ref.SHA256] = bytes.Clone(data)
	}
	return ref, nil
}

// GetBlob implements events.BlobStore. The caller may keep and change the
// returned bytes.
func (s *Store) GetBlob(ctx context.Context, ref events.BlobRef) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	s.bmu.Lock()
	data, ok := s.blobs[ref.SHA256]
	s.bmu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", events.ErrBlobNotFound, ref)
	}
	if err := ref.Check(data); err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

// MaxDataBytes returns the largest event Data the store accepts (the
// runtime keeps tool results and model messages under it).
func (s *Store) MaxDataBytes() int { return s.maxData }

// Close implements events.Store. It ends live subscriptions with
// ErrClosed; every later call fails with ErrClosed. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	return nil
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// streamIndex is what the store keeps of one stream besides its events,
// which are in the global log.
type streamIndex struct {
	positions []uint64 // positions of its events; index = version-1
	hash      string   // events.Hash of its last event
}

// logBlock is how many events a block of the global log holds. The log
// grows a block at a time and never copies the blocks it has (one growing
// slice copied the whole log at every growth: the largest cost of an
// append in BenchmarkRun); only the first block grows by append, so a
// small store stays small.
const logBlock = 4096

// eventLog is the global log, in blocks of logBlock events.
type eventLog struct {
	blocks [][]events.Event
	n      uint64
}

// len returns the number of events in the log.
func (l *eventLog) len() uint64 { return l.n }

// at returns the event at position pos (1 to len()).
func (l *eventLog) at(pos uint64) *events.Event {
	i := pos - 1
	return &l.blocks[i/logBlock][i%logBlock]
}

// add appends a zero event to the log and returns it, for the caller to
// fill in place (one copy of the event, not two).
func (l *eventLog) add() *events.Event {
	if n := len(l.blocks); n == 0 || len(l.blocks[n-1]) == logBlock {
		var b []events.Event
		if n > 0 {
			b = make([]events.Event, 0, logBlock)
		}
		l.blocks = append(l.blocks, b)
	}
	last := &l.blocks[len(l.blocks)-1]
	*last = append(*last, events.Event{})
	l.n++
	return &(*last)[len(*last)-1]
}

// clone returns ev with its own copy of Data, so callers cannot change the
// stored event.
func clone(ev events.Event) events.Event {
	ev.Data = bytes.Clone(ev.Data)
	return ev
}

// chainKey is the key of new events, nil without chain keys.
func (s *Store) chainKey() *events.ChainKey {
	if s.keys == nil {
		return nil
	}
	return s.keys.Current()
}
