package jetstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/events"
)

// A damaged file store skips the messages of a corrupted block but still
// counts them (see "Reads" in the package doc). The reads tell that apart
// from a stream that is merely shorter by asking the stream's leader: its
// state (Info) and a message get through the stream API, which the leader
// answers, not a direct get, which any replica may answer from behind.

// leaderHas reports whether the stream's leader can read a message: the
// one at seq, or (seq 0) the last one on subject. Messages are never
// deleted, so one the leader's state counts but cannot give back is lost.
func (s *Store) leaderHas(ctx context.Context, seq uint64, subject string) (bool, error) {
	req := map[string]any{"seq": seq}
	if seq == 0 {
		req = map[string]any{"last_by_subj": subject}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	msg, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+s.name, body)
	if err != nil {
		return false, fmt.Errorf("get message from the stream leader: %w", err)
	}
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return false, fmt.Errorf("get message from the stream leader: %w", err)
	}
	switch {
	case resp.Error == nil:
		return true, nil
	case resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return false, nil
	default:
		return false, fmt.Errorf("get message from the stream leader: %w", resp.Error)
	}
}

// probe returns an *events.DamagedStoreError when the stream's state says
// it holds message seq but the leader cannot read it, nil when the message
// is readable or not stored yet (or the server does not answer: the caller
// goes on waiting).
func (s *Store) probe(ctx context.Context, seq uint64) error {
	info, err := s.stream.Info(ctx)
	if err != nil || info.State.LastSeq < seq {
		return nil
	}
	if ok, err := s.leaderHas(ctx, seq, ""); err == nil && !ok {
		return &events.DamagedStoreError{Position: seq, Reason: fmt.Sprintf(
			"the stream holds messages up to %d but message %d cannot be read (a damaged file store?)", info.State.LastSeq, seq)}
	}
	return nil
}

// checkEmpty is asked when a direct get found no message on filter (one
// stream's subjects): it returns nil when the stream indeed holds none (or
// holds some the leader can read: the direct get came from behind), and
// an *events.DamagedStoreError when it holds some but its last one cannot
// be read. A stream that is not new must not look new, or an append would
// fork it.
func (s *Store) checkEmpty(ctx context.Context, filter string) error {
	info, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return fmt.Errorf("read stream head: %w", err)
	}
	var n uint64
	stream := ""
	for subject, count := range info.State.Subjects {
		n += count
		stream, _, _ = s.subjects.ParseEvent(subject)
	}
	if n == 0 {
		return nil
	}
	ok, err := s.leaderHas(ctx, 0, filter)
	switch {
	case err != nil:
		return fmt.Errorf("read stream head: %w", err)
	case ok:
		return errRetryHead
	}
	// Versions are dense: the stream's n-th message is its version n
	// (unless poison was published on its subjects too).
	return &events.DamagedStoreError{Stream: stream, Version: n, Reason: fmt.Sprintf(
		"the store holds %d messages of the stream but cannot read its last one (a damaged file store?)", n)}
}

// errRetryHead: the stream's last message appeared after the direct get
// found none; read the head again.
var errRetryHead = fmt.Errorf("stream head appeared while it was read")

// gapError is the damage of a consumer that delivered sequence got where
// it had to deliver want.
func gapError(want, got uint64) error {
	return &events.DamagedStoreError{Position: want, Reason: fmt.Sprintf(
		"message %d cannot be read: the store skipped from %d to %d (a damaged file store?)", want, want-1, got)}
}
