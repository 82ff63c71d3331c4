package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/weft-run/weft/events"
)

// JetStream header names and error codes the store relies on (nats-server
// server/stream.go and server/jetstream_errors_generated.go).
const (
	hdrMsgID              = "Nats-Msg-Id"
	hdrExpectedSubjSeq    = "Nats-Expected-Last-Subject-Sequence"
	hdrExpectedSubjSeqFor = "Nats-Expected-Last-Subject-Sequence-Subject"

	errCodeWrongLastSeq         jetstream.ErrorCode = 10071
	errCodeWrongLastSeqConstant jetstream.ErrorCode = 10164
	errCodeMsgTooLarge          jetstream.ErrorCode = 10054
	errCodeBatchDuplicate       jetstream.ErrorCode = 10201
	errCodeDuplicateInProcess   jetstream.ErrorCode = 10158
)

// Append implements events.Appender. It blocks until the server has
// acknowledged the events (see the package doc for what that guarantees)
// or refused them.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	fail := func(err error) (events.AppendResult, error) {
		var e *events.Error
		if errors.As(err, &e) {
			return events.AppendResult{}, err
		}
		var wv *events.WrongVersionError
		if errors.As(err, &wv) {
			return events.AppendResult{}, err
		}
		return events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: err}
	}
	if len(evs) == 1 {
		// One message: the pipeline of one, with no batch to stage.
		return s.appendPipelined(ctx, stream, expected, evs)
	}
	batch, refs, subjects, filter, err := s.prepare(ctx, stream, evs)
	if err != nil {
		return events.AppendResult{}, err
	}

	fresh := false
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if s.closed() {
			return fail(events.ErrClosed)
		}
		h, settled, err := s.appendHead(ctx, stream, filter, batch, expected, fresh)
		if settled != nil {
			return *settled, err
		}
		if err != nil {
			return fail(err)
		}
		hashes := events.ChainHashes(batch, h.version, h.hash, s.chainKey())
		msgs, err := s.messages(batch, subjects, filter, h)
		if err != nil {
			return fail(err)
		}
		res, err := s.publish(ctx, msgs, h)
		if err == nil {
			s.setHead(stream, head{version: res.LastVersion, seq: res.LastPosition, hash: hashes[len(hashes)-1]})
			res.Blobs, res.Hashes = refs, hashes
			return res, nil
		}
		var apiErr *jetstream.APIError
		switch {
		case errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeWrongLastSeq || apiErr.ErrorCode == errCodeWrongLastSeqConstant):
			// Another writer got in first. Re-read the head; with an
			// exact version this ends in WrongVersionError, with Any it
			// retries on the new head.
			s.dropHead(stream)
			fresh = true
			if attempt >= 8 {
				backoff(ctx, attempt)
			}
		case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeDuplicateInProcess:
			// The same id is being stored by a concurrent publish: wait
			// for it, then resolve as a duplicate or a conflict.
			fresh = true
			backoff(ctx, attempt)
		case errors.Is(err, errDuplicate), errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeBatchDuplicate:
			res, _, err := s.findStored(ctx, stream, batch, true)
			return res, err
		case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeMsgTooLarge,
			errors.Is(err, nats.ErrMaxPayload):
			return fail(fmt.Errorf("%w: %v", events.ErrPayloadTooLarge, err))
		default:
			return fail(err)
		}
	}
}

// appendHead returns the head of stream an append of batch at expected
// builds on: the cached one, or the server's when the cache is missing,
// fresh is set, or the cache is behind the expected version. When the
// stream is not at the expected version the append is settled without a
// publish: settled is its result when batch is already stored (a retry
// whose acknowledgement was lost), and err says why otherwise (a
// *events.WrongVersionError, or the failure to read the head).
func (s *Store) appendHead(ctx context.Context, stream, filter string, batch []events.Event, expected events.ExpectedVersion, fresh bool) (h head, settled *events.AppendResult, err error) {
	h, cached := s.cachedHead(stream)
	for {
		if !cached || fresh {
			if h, err = s.fetchHead(ctx, filter); err != nil {
				return head{}, nil, &events.Error{Op: "append", Stream: stream, Err: err}
			}
			s.setHead(stream, h)
			cached = false
		}
		want, ok := expected.Version()
		if !ok || h.version == want {
			return h, nil, nil
		}
		if cached {
			fresh = true // the cache may be behind: check with the server
			continue
		}
		// Not at the expected version: this may be a retry of an append
		// that succeeded (its ack lost). Look for the ids.
		res, dup, err := s.findStored(ctx, stream, batch, false)
		if dup || err != nil {
			return head{}, &res, err
		}
		return head{}, nil, &events.WrongVersionError{Stream: stream, Expected: expected, Actual: h.version}
	}
}

// prepare checks an append (events.PrepareAppend), keeps its large data in
// the blob bucket (events.OffloadBlobs) and returns the events to store,
// their blob references, their ingest subjects and the stream's filter.
func (s *Store) prepare(ctx context.Context, stream string, evs []events.Event) ([]events.Event, []*events.BlobRef, []string, string, error) {
	fail := func(err error) ([]events.Event, []*events.BlobRef, []string, string, error) {
		return nil, nil, nil, "", &events.Error{Op: "append", Stream: stream, Err: err}
	}
	if s.closed() {
		return fail(events.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	batch, err := events.PrepareAppend(stream, evs, s.maxData)
	if err != nil {
		return nil, nil, nil, "", err
	}
	refs, err := events.OffloadBlobs(ctx, s, stream, batch, s.inline)
	if err != nil {
		return nil, nil, nil, "", err
	}
	filter, err := s.subjects.StreamEvents(stream)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", events.ErrInvalidStream, err))
	}
	subjects := make([]string, len(batch))
	for i := range batch {
		if subjects[i], err = s.subjects.LogIngest(stream, string(batch[i].Type)); err != nil {
			return fail(fmt.Errorf("%w: event %d: %v", events.ErrInvalidEvent, i, err))
		}
	}
	return batch, refs, subjects, filter, nil
}

// backoff sleeps a little longer after each failed attempt, up to 10ms.
func backoff(ctx context.Context, attempt int) {
	d := time.Duration(min(attempt, 20)) * 500 * time.Microsecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// messages builds the messages of batch, numbered and chained by
// events.Chain on top of stream head h. The first carries the expected last
// subject sequence of the whole weft stream, so the server refuses the
// batch if h (and so the chain's first link) is stale.
func (s *Store) messages(batch []events.Event, subjects []string, filter string, h head) ([]*nats.Msg, error) {
	msgs := make([]*nats.Msg, len(batch))
	for i := range batch {
		ev := &batch[i]
		body, err := encodeEvent(ev)
		if err != nil {
			return nil, err
		}
		m := &nats.Msg{Subject: subjects[i], Data: body, Header: nats.Header{}}
		m.Header.Set(hdrMsgID, ev.ID.String())
		if i == 0 {
			m.Header.Set(hdrExpectedSubjSeq, strconv.FormatUint(h.seq, 10))
			m.Header.Set(hdrExpectedSubjSeqFor, filter)
		}
		// Headers are at most a few hundred bytes; count 1 KiB for them.
		if size := len(body) + len(m.Subject) + 1024; size > s.maxMsg {
			return nil, fmt.Errorf("%w: event %d encodes to %d bytes, server max payload is %d", events.ErrPayloadTooLarge, i, size, s.maxMsg)
		}
		msgs[i] = m
	}
	return msgs, nil
}

// errDuplicate marks a single publish the server recognised as a duplicate.
var errDuplicate = errors.New("duplicate message id")

// publish sends msgs (one message, or an atomic batch) and returns where
// they were stored. A duplicate single publish returns errDuplicate.
func (s *Store) publish(ctx context.Context, msgs []*nats.Msg, h head) (events.AppendResult, error) {
	n := uint64(len(msgs))
	res := events.AppendResult{FirstVersion: h.version + 1, LastVersion: h.version + n}
	if len(msgs) == 1 {
		ack, err := s.js.PublishMsg(ctx, msgs[0])
		if err != nil {
			return res, err
		}
		if ack.Duplicate {
			return res, errDuplicate
		}
		res.LastPosition = ack.Sequence
		return res, nil
	}
	ack, err := jetstreamext.PublishMsgBatch(ctx, s.js, msgs, jetstreamext.BatchFlowControl{AckFirst: false})
	if err != nil {
		return res, err
	}
	s.noteSeq(ack.Sequence)
	res.LastPosition = ack.Sequence
	return res, nil
}

// findStored looks for the ids of batch in stream, to answer a re-append.
// If every id is stored there, contiguous and in batch order, it returns the
// original result with Duplicate set and dup true. If none is, it returns
// dup false, unless the server said the ids are known (known): then they
// are stored in another stream, and the append is refused with
// ErrInvalidEvent, as is a batch that shares only some ids with stored
// events.
func (s *Store) findStored(ctx context.Context, stream string, batch []events.Event, known bool) (events.AppendResult, bool, error) {
	filter, err := s.subjects.StreamEvents(stream)
	if err != nil {
		return events.AppendResult{}, false, &events.Error{Op: "append", Stream: stream, Err: err}
	}
	want := make(map[uuid.UUID]int, len(batch))
	for i, ev := range batch {
		want[ev.ID] = i
	}
	stored := make([]events.Event, len(batch))
	found := 0
	if _, err := s.scan(ctx, filter, 1, func(ev events.Event) bool {
		if i, ok := want[ev.ID]; ok {
			stored[i] = ev
			found++
		}
		return found < len(batch)
	}); err != nil {
		return events.AppendResult{}, false, &events.Error{Op: "append", Stream: stream, Err: err}
	}
	refuse := func(format string, args ...any) (events.AppendResult, bool, error) {
		return events.AppendResult{}, false, &events.Error{Op: "append", Stream: stream,
			Err: fmt.Errorf("%w: %s", events.ErrInvalidEvent, fmt.Sprintf(format, args...))}
	}
	switch {
	case found == 0 && !known:
		return events.AppendResult{}, false, nil
	case found == 0:
		return refuse("event id %s is already stored in another stream", batch[0].ID)
	case found < len(batch):
		return refuse("the batch shares only %d of its %d event ids with stored events", found, len(batch))
	}
	for i := 1; i < len(stored); i++ {
		if stored[i].Version != stored[0].Version+uint64(i) {
			return refuse("event id %s is already stored at version %d, not after %s", stored[i].ID, stored[i].Version, stored[i-1].ID)
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
