package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// Append implements events.Appender. See the package documentation for how
// idempotency and wrong expected versions are resolved.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if s.closed() {
		return events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: events.ErrClosed}
	}
	prepared, err := events.PrepareAppend(stream, evs, s.maxData)
	if err != nil {
		return events.AppendResult{}, err
	}
	var wr *esdb.WriteResult
	for attempt := 0; ; attempt++ {
		// The chain links the batch to the stream's last event, so the
		// append is sent under the exact revision that event was read at
		// (whatever the caller's expectation): a writer that got in
		// between makes the server refuse it, and it is chained again.
		current, prev, err := s.lastEvent(ctx, stream)
		if err != nil {
			return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("read the stream's last event: %w", err))
		}
		if !expected.Matches(current) {
			return s.resolveConflict(ctx, stream, expected, prepared)
		}
		if expected.IsAny() && attempt == 0 {
			// Under Any the server deduplicates a retry by id, but the
			// append is sent under an exact revision, where it does not:
			// look for the batch in the stream first.
			if res, found, err := s.findStored(ctx, stream, prepared); found || err != nil {
				return res, err
			}
		}
		hashes := events.ChainHashes(prepared, current, prev, s.chainKey())
		appendID := uuid.NewString()
		data := make([]esdb.EventData, len(prepared))
		for i, ev := range prepared {
			if data[i], err = toEventData(ev, appendID); err != nil {
				return events.AppendResult{}, s.wrap("append", stream, err)
			}
		}
		wr, err = s.client.AppendToStream(ctx, s.dbStream(stream), esdb.AppendToStreamOptions{ExpectedRevision: toRevision(events.Exact(current))}, data...)
		switch {
		case err == nil:
		case isWrongExpectedVersion(err) && expected.IsAny() && attempt < maxAnyAttempts:
			continue // another writer got in first: chain on its events
		case isWrongExpectedVersion(err):
			return s.resolveConflict(ctx, stream, expected, prepared)
		case isTooLarge(err):
			return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("%w: refused by the server: %w", events.ErrPayloadTooLarge, err))
		default:
			return events.AppendResult{}, s.wrap("append", stream, err)
		}
		return s.appended(ctx, stream, wr, prepared, appendID, hashes)
	}
}

// maxAnyAttempts bounds how often an append under events.Any is chained
// again after losing a race to another writer.
const maxAnyAttempts = 100

// lastEvent reads the version and events.Hash of stream's last event (0, ""
// for a stream with no events).
func (s *Store) lastEvent(ctx context.Context, stream string) (uint64, string, error) {
	rs, err := s.client.ReadStream(ctx, s.dbStream(stream), esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
	if isNotFound(err) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer rs.Close()
	re, err := rs.Recv()
	switch {
	case isNotFound(err):
		return 0, "", nil
	case errors.Is(err, io.EOF):
		return 0, "", nil
	case err != nil:
		return 0, "", err
	}
	ev, _, err := fromRecorded(re.OriginalEvent(), stream)
	if err != nil {
		return 0, "", err
	}
	return ev.Version, events.Hash(ev), nil
}

// findStored reads stream and looks for batch in it (see findBatch).
func (s *Store) findStored(ctx context.Context, stream string, batch []events.Event) (events.AppendResult, bool, error) {
	stored, err := s.ReadStream(ctx, stream, 0)
	if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
		return events.AppendResult{}, false, s.wrap("append", stream, fmt.Errorf("read the stream: %w", err))
	}
	res, ok := findBatch(stored, batch)
	return res, ok, nil
}

// appended reports the result of an append the server accepted.
func (s *Store) appended(ctx context.Context, stream string, wr *esdb.WriteResult, prepared []events.Event, appendID string, hashes []string) (events.AppendResult, error) {
	// wr.NextExpectedVersion is the revision of the batch's last event,
	// whether this call wrote it or an earlier one did (a deduplicated
	// retry). The append id in its metadata tells which.
	lastRev := wr.NextExpectedVersion
	n := uint64(len(prepared))
	if lastRev+1 < n {
		return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("server reported revision %d after appending %d events", lastRev, n))
	}
	last, lastAppendID, err := s.readEvent(ctx, stream, lastRev)
	if err != nil {
		return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("read back the appended events: %w", err))
	}
	if last.ID != prepared[n-1].ID {
		return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("event at revision %d is %s, want the batch's last event %s", lastRev, last.ID, prepared[n-1].ID))
	}
	res := events.AppendResult{
		FirstVersion: lastRev + 2 - n,
		LastVersion:  lastRev + 1,
		LastPosition: last.Position,
		Duplicate:    lastAppendID != appendID,
		Hashes:       hashes,
	}
	if res.Duplicate {
		// Stored by an earlier attempt, maybe chained on another head:
		// the hashes are those of the stored events.
		dup, found, err := s.findStored(ctx, stream, prepared)
		if err != nil {
			return events.AppendResult{}, err
		}
		if !found {
			return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("the server deduplicated the batch, but its events %s.. are not in the stream", prepared[0].ID))
		}
		res.Hashes = dup.Hashes
	}
	if res.LastPosition == 0 && !res.Duplicate && wr.CommitPosition != 0 {
		// A server that does not report positions on stream reads.
		res.LastPosition = wr.CommitPosition + 1
	}
	return res, nil
}

// resolveConflict handles a "wrong expected version" answer: the batch may
// already be stored (a retry under another expectation than the original),
// in which case the append is a duplicate; otherwise it is a
// *events.WrongVersionError with the stream's current version.
func (s *Store) resolveConflict(ctx context.Context, stream string, expected events.ExpectedVersion, batch []events.Event) (events.AppendResult, error) {
	stored, err := s.ReadStream(ctx, stream, 0)
	if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
		return events.AppendResult{}, s.wrap("append", stream, fmt.Errorf("wrong expected version, then read the stream: %w", err))
	}
	if res, ok := findBatch(stored, batch); ok {
		return res, nil
	}
	return events.AppendResult{}, &events.WrongVersionError{Stream: stream, Expected: expected, Actual: uint64(len(stored))}
}

// findBatch looks for the batch's ids, in order and contiguous, in stored
// (a whole stream) and returns the result of the append that stored them.
func findBatch(stored, batch []events.Event) (events.AppendResult, bool) {
	for i, ev := range stored {
		if ev.ID != batch[0].ID {
			continue
		}
		if !sameIDs(stored[i:], batch) {
			continue // a stream can hold an id twice (see the package documentation)
		}
		last := stored[i+len(batch)-1]
		return events.AppendResult{
			FirstVersion: stored[i].Version,
			LastVersion:  last.Version,
			LastPosition: last.Position,
			Duplicate:    true,
			Hashes:       events.StoredHashes(stored[i : i+len(batch)]),
		}, true
	}
	return events.AppendResult{}, false
}

// sameIDs reports whether stored starts with the ids of batch.
func sameIDs(stored, batch []events.Event) bool {
	if len(stored) < len(batch) {
		return false
	}
	for j := range batch {
		if stored[j].ID != batch[j].ID {
			return false
		}
	}
	return true
}

// readEvent reads the event at revision rev of stream, with its append id.
func (s *Store) readEvent(ctx context.Context, stream string, rev uint64) (events.Event, string, error) {
	rs, err := s.client.ReadStream(ctx, s.dbStream(stream), esdb.ReadStreamOptions{From: esdb.Revision(rev)}, 1)
	if err != nil {
		return events.Event{}, "", err
	}
	defer rs.Close()
	re, err := rs.Recv()
	if err != nil {
		return events.Event{}, "", err
	}
	return fromRecorded(re.OriginalEvent(), stream)
}
