package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// Header names of the pipeline's fences (nats-server server/stream.go).
const (
	hdrExpectedLastSeq   = "Nats-Expected-Last-Sequence"
	hdrExpectedLastMsgID = "Nats-Expected-Last-Msg-Id"
)

var _ events.StepAppender = (*Store)(nil)

// AppendSteps implements events.StepAppender: the events are published
// back to back, each a message of its own, and the store waits once for
// their acknowledgements (see "Appends" in the package doc). Every message
// is fenced, so a stored event always follows the one before it in evs:
// the first by the stream's last subject sequence, as in Append; each
// next one by the log's last sequence and last message id, which must be
// those of the message before it. When a fence fails because another
// stream's event got in between, the store carries on with the rest from
// the stored prefix; when it fails for any other reason, it returns the
// prefix (in the result) with the error.
//
// On a replicated stream (more than one replica) the events go one at a
// time instead, each its own round trip: a clustered stream re-checks the
// message-id fence as it applies the pipelined messages, and a stale one
// there is a "critical write error" that stops the stream (seen with
// nats-server 2.15.2 in the simtests' three-server cluster).
func (s *Store) AppendSteps(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if !s.replicated || len(evs) < 2 {
		return s.appendPipelined(ctx, stream, expected, evs)
	}
	return s.appendOneByOne(ctx, stream, expected, evs)
}

// appendOneByOne appends evs one event at a time; the result reports the
// prefix stored when one fails.
func (s *Store) appendOneByOne(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Event) (events.AppendResult, error) {
	var done events.AppendResult
	blobs := make([]*events.BlobRef, 0, len(evs))
	anyBlob := false
	for i := range evs {
		res, err := s.appendPipelined(ctx, stream, expected, evs[i:i+1])
		if err != nil {
			if i == 0 {
				return res, err
			}
			return done, err
		}
		var ref *events.BlobRef
		if len(res.Blobs) > 0 && res.Blobs[0] != nil {
			ref, anyBlob = res.Blobs[0], true
		}
		blobs = append(blobs, ref)
		if i == 0 {
			done = res
		} else {
			done.LastVersion, done.LastPosition = res.LastVersion, res.LastPosition
			done.Duplicate = done.Duplicate && res.Duplicate
			done.Hashes = append(done.Hashes, res.Hashes...)
		}
		expected = events.Exact(res.LastVersion)
	}
	done.Blobs = nil
	if anyBlob {
		done.Blobs = blobs
	}
	return done, nil
}

// appendPipelined appends evs as pipelined, fenced single messages; see
// AppendSteps. Append uses it for a single event.
func (s *Store) appendPipelined(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Event) (events.AppendResult, error) {
	batch, refs, subjects, filter, err := s.prepare(ctx, stream, evs)
	if err != nil {
		return events.AppendResult{}, err
	}
	var done events.AppendResult // the prefix stored so far
	finish := func(res events.AppendResult, err error) (events.AppendResult, error) {
		if done.LastVersion == 0 {
			if err == nil {
				res.Blobs = refs
			}
			return res, err
		}
		if err != nil {
			return done, err // a prefix is stored: say which
		}
		done.LastVersion, done.LastPosition, done.Duplicate = res.LastVersion, res.LastPosition, false
		done.Hashes = append(done.Hashes, res.Hashes...)
		done.Blobs = refs
		return done, nil
	}

	fresh := false
	for attempt := 0; ; attempt++ {
		if err := s.live(ctx); err != nil {
			return finish(events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: err})
		}
		h, settled, err := s.appendHead(ctx, stream, filter, batch, expected, fresh)
		if settled != nil {
			return finish(*settled, err)
		}
		if err != nil {
			return finish(events.AppendResult{}, err)
		}
		hashes := events.ChainHashes(batch, h.version, h.hash, s.chainKey())
		msgs, err := s.messages(batch, subjects, filter, h)
		if err != nil {
			return finish(events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: err})
		}
		last := s.lastSeq.Load()
		for j := 1; j < len(msgs); j++ {
			msgs[j].Header.Set(hdrExpectedLastSeq, strconv.FormatUint(last+uint64(j), 10))
			msgs[j].Header.Set(hdrExpectedLastMsgID, batch[j-1].ID.String())
		}
		acks, firstErr := s.publishPipelined(ctx, msgs)
		stored := 0
		for stored < len(acks) && acks[stored] != nil && !acks[stored].Duplicate {
			stored++
		}
		for j := stored + 1; j < len(acks); j++ {
			if acks[j] != nil && !acks[j].Duplicate {
				// A fence let an event through after one that was not
				// stored: the fences are broken. Say so loudly.
				return finish(events.AppendResult{}, &events.DamagedStoreError{Stream: stream, Version: h.version + uint64(j) + 1, Reason: fmt.Sprintf(
					"event %d of a pipelined append was stored at position %d after event %d was not", j, acks[j].Sequence, stored)})
			}
		}
		if stored > 0 {
			s.noteSeq(acks[stored-1].Sequence)
			res := events.AppendResult{FirstVersion: h.version + 1, LastVersion: h.version + uint64(stored), LastPosition: acks[stored-1].Sequence, Hashes: hashes[:stored]}
			s.setHead(stream, head{version: res.LastVersion, seq: res.LastPosition, hash: hashes[stored-1]})
			if stored == len(batch) {
				return finish(res, nil)
			}
			// The rest follows the stored prefix, whatever stopped it
			// (another stream's event in between, or a refusal the next
			// round reports): exactly after it.
			if done.LastVersion == 0 {
				done = res
			} else {
				done.LastVersion, done.LastPosition = res.LastVersion, res.LastPosition
				done.Hashes = append(done.Hashes, res.Hashes...)
			}
			batch, subjects = batch[stored:], subjects[stored:]
			expected = events.Exact(res.LastVersion)
			fresh = false
			continue
		}
		// Nothing stored: the first message's answer decides, as for a
		// single publish.
		var apiErr *jetstream.APIError
		switch err := firstErr; {
		case acks[0] != nil && acks[0].Duplicate:
			res, _, err := s.findStored(ctx, stream, batch, true)
			return finish(res, err)
		case errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeWrongLastSeq || apiErr.ErrorCode == errCodeWrongLastSeqConstant):
			s.dropHead(stream)
			fresh = true
			if attempt >= 8 {
				backoff(ctx, attempt)
			}
		case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeDuplicateInProcess:
			fresh = true
			backoff(ctx, attempt)
		case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeMsgTooLarge, errors.Is(err, nats.ErrMaxPayload):
			return finish(events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: fmt.Errorf("%w: %v", events.ErrPayloadTooLarge, err)})
		default:
			return finish(events.AppendResult{}, &events.Error{Op: "append", Stream: stream, Err: err})
		}
	}
}

// publishPipelined publishes msgs without waiting in between, then waits
// for every acknowledgement. acks[i] is nil where message i was refused;
// the error is that of the first message (nil if it was stored or a
// duplicate). Every stored message's sequence is noted (noteSeq).
func (s *Store) publishPipelined(ctx context.Context, msgs []*nats.Msg) ([]*jetstream.PubAck, error) {
	futures := make([]jetstream.PubAckFuture, len(msgs))
	acks := make([]*jetstream.PubAck, len(msgs))
	var firstErr error
	for i, m := range msgs {
		f, err := s.js.PublishMsgAsync(m)
		if err != nil {
			if i == 0 {
				firstErr = err
			}
			break // the later messages would be refused by their fences
		}
		futures[i] = f
	}
	// A context without a deadline still bounds the wait, as a
	// synchronous publish would: one timer for the whole pipeline.
	var timeout <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		t := time.NewTimer(s.js.Options().DefaultTimeout)
		defer t.Stop()
		timeout = t.C
	}
	for i, f := range futures {
		if f == nil {
			break
		}
		select {
		case <-timeout:
			if i == 0 {
				firstErr = fmt.Errorf("acknowledgement of the append: %w", nats.ErrTimeout)
			}
			return acks, firstErr
		case ack := <-f.Ok():
			acks[i] = ack
			if !ack.Duplicate {
				s.noteSeq(ack.Sequence)
			}
		case err := <-f.Err():
			if i == 0 {
				firstErr = err
			}
		case <-ctx.Done():
			if i == 0 {
				firstErr = ctx.Err()
			}
			return acks, firstErr
		case <-s.closing.Done():
			if i == 0 {
				firstErr = events.ErrClosed
			}
			return acks, firstErr
		}
	}
	return acks, firstErr
}

// noteSeq records that the log's last message is at sequence seq, as far
// as this store knows: the pipeline fences its messages on the sequences
// after it. A stale value only makes a fence fail, and the pipeline carry
// on from the stored prefix.
func (s *Store) noteSeq(seq uint64) { s.lastSeq.Store(seq) }
