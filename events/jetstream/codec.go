package jetstream

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// wireEvent is the JSON body of an event message: the envelope without its
// Position, which is the message's stream sequence. Data is spliced in
// verbatim by encodeEvent, so it survives byte for byte.
type wireEvent struct {
	ID            uuid.UUID       `json:"id"`
	Stream        string          `json:"stream"`
	Version       uint64          `json:"version"`
	Type          events.Type     `json:"type"`
	SchemaVersion int             `json:"schema_version"`
	Time          time.Time       `json:"time"`
	SessionID     string          `json:"session_id,omitempty"`
	RunID         string          `json:"run_id,omitempty"`
	ToolCallID    string          `json:"tool_call_id,omitempty"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	CausationID   string          `json:"causation_id,omitempty"`
	PrevHash      string          `json:"prev_hash,omitempty"`
	KeyID         string          `json:"key_id,omitempty"`
	MAC           string          `json:"mac,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
}

// encodeEvent returns the message body of ev: what json.Marshal gives for
// its wireEvent, with Data spliced in verbatim (json.Marshal would compact
// and HTML-escape it). It writes the envelope without reflection (every
// append encodes one per event); strings that need escaping, and times
// json.Marshal refuses, go through encoding/json.
func encodeEvent(ev *events.Event) ([]byte, error) {
	return events.AppendJSON(make([]byte, 0, events.SizeHint(ev)), ev, false)
}

// decode decodes the body of the message at position pos, stored on
// subject, into an event. A body that is not a weft event envelope is a
// *events.PoisonError (matching events.ErrMalformed too) naming the stream
// that subject names.
func (s *Store) decode(subject string, body []byte, pos uint64) (events.Event, error) {
	ev, err := decodeEvent(body, pos)
	if err != nil {
		stream, _, _ := s.subjects.ParseEvent(subject)
		return events.Event{Stream: stream, Position: pos}, &events.PoisonError{Stream: stream, Position: pos, Reason: err.Error(), Err: err}
	}
	return ev, nil
}

// decodeEvent decodes a message body into an event at position pos.
func decodeEvent(body []byte, pos uint64) (events.Event, error) {
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return events.Event{}, fmt.Errorf("%w: message %d is not a weft event: %v", events.ErrMalformed, pos, err)
	}
	if w.ID == uuid.Nil || w.Stream == "" || w.Version == 0 || w.Type == "" {
		return events.Event{}, fmt.Errorf("%w: message %d: not a weft event envelope", events.ErrMalformed, pos)
	}
	return events.Event{
		ID:            w.ID,
		Stream:        w.Stream,
		Version:       w.Version,
		Position:      pos,
		Type:          w.Type,
		SchemaVersion: w.SchemaVersion,
		Time:          w.Time,
		SessionID:     w.SessionID,
		RunID:         w.RunID,
		ToolCallID:    w.ToolCallID,
		CorrelationID: w.CorrelationID,
		CausationID:   w.CausationID,
		PrevHash:      w.PrevHash,
		KeyID:         w.KeyID,
		MAC:           w.MAC,
		Data:          w.Data,
	}, nil
}
