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
	Data          json.RawMessage `json:"data,omitempty"`
}

// encodeEvent returns the message body of ev.
func encodeEvent(ev *events.Event) ([]byte, error) {
	w := wireEvent{
		ID:            ev.ID,
		Stream:        ev.Stream,
		Version:       ev.Version,
		Type:          ev.Type,
		SchemaVersion: ev.SchemaVersion,
		Time:          ev.Time,
		SessionID:     ev.SessionID,
		RunID:         ev.RunID,
		ToolCallID:    ev.ToolCallID,
		CorrelationID: ev.CorrelationID,
		CausationID:   ev.CausationID,
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	if len(ev.Data) == 0 {
		return b, nil
	}
	// json.Marshal would compact and HTML-escape Data; splice it instead.
	out := make([]byte, 0, len(b)+len(ev.Data)+9)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"data":`...)
	out = append(out, ev.Data...)
	out = append(out, '}')
	return out, nil
}

// decodeEvent decodes a message body into an event at position pos.
func decodeEvent(body []byte, pos uint64) (events.Event, error) {
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return events.Event{}, fmt.Errorf("%w: message %d: %v", events.ErrMalformed, pos, err)
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
		Data:          w.Data,
	}, nil
}
