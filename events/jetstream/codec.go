package jetstream

import (
	"encoding/json"
	"fmt"
	"strconv"
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
	Data          json.RawMessage `json:"data,omitempty"`
}

// encodeEvent returns the message body of ev: what json.Marshal gives for
// its wireEvent, with Data spliced in verbatim (json.Marshal would compact
// and HTML-escape it). It writes the envelope without reflection (every
// append encodes one per event); strings that need escaping, and times
// json.Marshal refuses, go through encoding/json.
func encodeEvent(ev *events.Event) ([]byte, error) {
	t, err := ev.Time.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	b := make([]byte, 0, 256+len(ev.Data))
	b = append(b, `{"id":"`...)
	b = append(b, ev.ID.String()...)
	b = append(b, `","stream":`...)
	b = appendString(b, ev.Stream)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, ev.Version, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, string(ev.Type))
	b = append(b, `,"schema_version":`...)
	b = strconv.AppendInt(b, int64(ev.SchemaVersion), 10)
	b = append(b, `,"time":`...)
	b = append(b, t...)
	for _, f := range [...]struct{ key, val string }{
		{`,"session_id":`, ev.SessionID}, {`,"run_id":`, ev.RunID}, {`,"tool_call_id":`, ev.ToolCallID},
		{`,"correlation_id":`, ev.CorrelationID}, {`,"causation_id":`, ev.CausationID},
		{`,"prev_hash":`, ev.PrevHash},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = appendString(b, f.val)
		}
	}
	if len(ev.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, ev.Data...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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
		PrevHash:      w.PrevHash,
		Data:          w.Data,
	}, nil
}
