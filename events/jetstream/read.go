package jetstream

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/weft-run/weft/events"
)

// pageSize is how many messages one batched direct get asks for.
const pageSize = 1024

// hdrNumPending is the direct-get response header that counts the messages
// still matching the request after this one.
const hdrNumPending = "Nats-Num-Pending"

// scan calls fn with every event on subjects matching filter with stream
// sequence >= from, in order, until fn returns false or the messages
// stored when scan reached them run out. It returns the number of events
// passed to fn.
//
// From the start (from <= 1) of one stream's filter, the versions must
// run 1, 2, 3, …: a version the server skips (a message of a damaged file
// store that it cannot read) fails the scan with an
// *events.DamagedStoreError naming the stream and the version.
func (s *Store) scan(ctx context.Context, filter string, from uint64, fn func(ev events.Event) bool) (int, error) {
	n := 0
	seq := max(from, 1)
	var version uint64 // the last version passed to fn
	prevSeq := seq - 1
	for {
		if err := s.live(ctx); err != nil {
			return n, err
		}
		page, err := jetstreamext.GetBatch(ctx, s.js, s.name, pageSize,
			jetstreamext.GetBatchSeq(seq), jetstreamext.GetBatchSubject(filter))
		if err != nil {
			return n, s.readErr(ctx, err)
		}
		last := ""
		got := 0
		for msg, err := range page {
			if errors.Is(err, jetstreamext.ErrNoMessages) {
				return n, nil
			}
			if err != nil {
				return n, s.readErr(ctx, err)
			}
			ev, err := s.decode(msg.Subject, msg.Data, msg.Sequence)
			if err != nil {
				return n, err
			}
			if from <= 1 && ev.Version != version+1 {
				return n, &events.DamagedStoreError{Stream: ev.Stream, Version: version + 1, Reason: fmt.Sprintf(
					"the store gave version %d (position %d) after version %d (position %d): a message between them cannot be read (a damaged file store?)",
					ev.Version, msg.Sequence, version, prevSeq)}
			}
			version, prevSeq = ev.Version, msg.Sequence
			n++
			got++
			seq = msg.Sequence + 1
			last = msg.Header.Get(hdrNumPending)
			if !fn(ev) {
				return n, nil
			}
		}
		if got == 0 || last == "0" {
			return n, nil
		}
		if _, err := strconv.ParseUint(last, 10, 64); err != nil {
			return n, errors.New("direct get: bad " + hdrNumPending + " header " + strconv.Quote(last))
		}
	}
}

// live returns ErrClosed once the store is closed, else ctx's error.
func (s *Store) live(ctx context.Context) error {
	if s.closed() {
		return events.ErrClosed
	}
	return ctx.Err()
}

// readErr turns an error of a read into ErrClosed when the store was
// closed under it.
func (s *Store) readErr(ctx context.Context, err error) error {
	if s.closed() {
		return events.ErrClosed
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// ReadStream implements events.Reader. It blocks for one direct get of the
// stream's last event (which answers a read of an empty or missing stream
// by itself, and primes the head Append checks against), then for one
// batched direct get per 1024 events of the stream, and for one read of the
// blob bucket per event whose Data is kept there.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if err := s.live(ctx); err != nil {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: err}
	}
	filter, err := s.subjects.StreamEvents(stream)
	if err != nil {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: errors.Join(events.ErrInvalidStream, err)}
	}
	// A batched direct get costs a subscription with a large pending
	// queue; asking for the last event first is cheap and is all a read of
	// a new session's stream needs.
	h, err := s.fetchHead(ctx, filter)
	if err != nil {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: s.readErr(ctx, err)}
	}
	s.setHead(stream, h)
	if h.version == 0 {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: events.ErrStreamNotFound}
	}
	out := []events.Event{}
	if from > h.version {
		return out, nil
	}
	n, err := s.scan(ctx, filter, 1, func(ev events.Event) bool {
		if ev.Version >= from {
			out = append(out, ev)
		}
		return true
	})
	if err != nil {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: err}
	}
	if n == 0 {
		return nil, &events.Error{Op: "read stream", Stream: stream, Err: events.ErrStreamNotFound}
	}
	for i := range out {
		if err := events.ResolveBlob(ctx, s, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadAll implements events.Reader. Events appended while it reads may or
// may not be included. Like ReadStream, it resolves the blob references of
// events kept in the blob bucket. A message that is not a weft event, and
// an event whose blob is missing or does not match its reference, is
// yielded as an *events.PoisonError with its Stream and Position, and the
// read goes on; any other failure to read a blob ends the read.
func (s *Store) ReadAll(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		stopped := false
		var rerr error
		_, err := s.scanOrdered(ctx, s.subjects.AllEvents(), after+1, func(ev events.Event, poison error) bool {
			if poison == nil {
				if berr := events.ResolveBlob(ctx, s, &ev); berr != nil {
					if !errors.Is(berr, events.ErrBlobNotFound) && !errors.Is(berr, events.ErrBlobCorrupt) {
						rerr = berr
						return false
					}
					poison = events.Poison(ev, berr)
				}
			}
			if poison != nil {
				poison = &events.Error{Op: "read all", Stream: ev.Stream, Err: poison}
			}
			if !yield(ev, poison) {
				stopped = true
				return false
			}
			return true
		})
		if rerr != nil {
			err = rerr
		}
		if err != nil && !stopped {
			yield(events.Event{}, &events.Error{Op: "read all", Err: err})
		}
	}
}
