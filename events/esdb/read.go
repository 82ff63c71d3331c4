package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/weft-run/weft/events"
)

// pageSize is how many events one read request asks for.
const pageSize = 512

// ReadStream implements events.Reader. It reads in pages of pageSize
// events.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	const op = "read stream"
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if s.closed() {
		return nil, &events.Error{Op: op, Stream: stream, Err: events.ErrClosed}
	}
	rev := uint64(0)
	if from > 0 {
		rev = from - 1
	}
	var out []events.Event
	for {
		n, err := s.readStreamPage(ctx, stream, rev, &out)
		switch {
		case isNotFound(err):
			return nil, &events.Error{Op: op, Stream: stream, Err: events.ErrStreamNotFound}
		case err != nil:
			return nil, s.wrap(op, stream, err)
		case n < pageSize:
			return out, nil
		}
		rev = out[len(out)-1].Version // the next revision
	}
}

// readStreamPage appends up to pageSize events from revision rev to out and
// returns how many it read.
func (s *Store) readStreamPage(ctx context.Context, stream string, rev uint64, out *[]events.Event) (int, error) {
	rs, err := s.client.ReadStream(ctx, s.dbStream(stream), esdb.ReadStreamOptions{From: esdb.Revision(rev)}, pageSize)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	n := 0
	for {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		rec := re.OriginalEvent()
		ev, _, err := fromRecorded(rec, stream)
		if err != nil {
			return n, events.Poison(events.Event{ID: rec.EventID, Stream: stream, Version: rec.EventNumber + 1, Type: events.Type(rec.EventType)}, err)
		}
		*out = append(*out, ev)
		n++
	}
}

// ReadAll implements events.Reader: it reads $all forwards in pages of
// pageSize events and yields this store's events (see the package
// documentation for what it skips).
func (s *Store) ReadAll(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	const op = "read all"
	return func(yield func(events.Event, error) bool) {
		if s.closed() {
			yield(events.Event{}, &events.Error{Op: op, Err: events.ErrClosed})
			return
		}
		// cursor is the commit position of the last event seen; reads of
		// $all from a position include the event at it.
		from, cursor, seen := fromPosition(after), after-1, after > 0
		for {
			rs, err := s.client.ReadAll(ctx, esdb.ReadAllOptions{From: from}, pageSize)
			if err != nil {
				yield(events.Event{}, s.readAllError(op, after, err))
				return
			}
			n := 0
			for {
				re, err := rs.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					rs.Close()
					yield(events.Event{}, s.readAllError(op, after, err))
					return
				}
				n++
				rec := re.OriginalEvent()
				if seen && rec.Position.Commit <= cursor {
					continue
				}
				cursor, seen = rec.Position.Commit, true
				ev, ok, err := s.decodeAll(rec)
				if !ok {
					continue
				}
				if !yield(ev, err) { // poison (the only error here) does not end the read
					rs.Close()
					return
				}
			}
			rs.Close()
			if n < pageSize {
				return
			}
			from = esdb.Position{Commit: cursor, Prepare: cursor}
		}
	}
}

// decodeAll decodes an event of $all; ok is false for an event that is not
// this store's (a system event or a stream outside the prefix).
func (s *Store) decodeAll(rec *esdb.RecordedEvent) (ev events.Event, ok bool, err error) {
	stream, mine := s.portStream(rec.StreamID)
	if !mine || strings.HasPrefix(rec.EventType, "$") {
		return events.Event{}, false, nil
	}
	ev, _, err = fromRecorded(rec, stream)
	if err != nil {
		// Written by another client: poison, quarantined by the reader.
		ev = events.Event{ID: rec.EventID, Stream: stream, Version: rec.EventNumber + 1, Type: events.Type(rec.EventType)}
		if pos := rec.Position.Commit; pos != unknownPosition {
			ev.Position = pos + 1
		}
		return ev, true, &events.Error{Op: "decode", Stream: stream, Err: events.Poison(ev, err)}
	}
	return ev, true, nil
}

// readAllError wraps an error of a read or subscription of $all.
func (s *Store) readAllError(op string, after uint64, err error) error {
	if isInvalidPosition(err) {
		err = fmt.Errorf("%w: after %d: %w", ErrInvalidPosition, after, err)
	}
	return s.wrap(op, "", err)
}
