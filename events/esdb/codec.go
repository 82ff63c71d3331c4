package esdb

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/weft-run/weft/events"
)

// contentTypeJSON is the content type the server reports for JSON events.
const contentTypeJSON = "application/json"

// Metadata is the JSON metadata of every event this backend writes: the
// envelope fields that have no EventStoreDB counterpart, and the id of the
// append that wrote the event.
type Metadata struct {
	SchemaVersion int       `json:"schema_version"`
	Time          time.Time `json:"time"`
	SessionID     string    `json:"session_id,omitempty"`
	RunID         string    `json:"run_id,omitempty"`
	ToolCallID    string    `json:"tool_call_id,omitempty"`
	CorrelationID string    `json:"correlation_id,omitempty"`
	CausationID   string    `json:"causation_id,omitempty"`
	// PrevHash is the envelope's link in its stream's hash chain.
	PrevHash string `json:"prev_hash,omitempty"`
	// KeyID and MAC key the link (see events.ChainKey).
	KeyID string `json:"key_id,omitempty"`
	MAC   string `json:"mac,omitempty"`
	// AppendID identifies the Append call that wrote the event; a re-append
	// of the same events (a retry) carries a different one, which is how
	// Append tells a deduplicated retry from a fresh write.
	AppendID string `json:"append_id"`
}

// toEventData encodes an envelope prepared by events.PrepareAppend.
func toEventData(ev events.Event, appendID string) (esdb.EventData, error) {
	meta, err := json.Marshal(Metadata{
		SchemaVersion: ev.SchemaVersion,
		Time:          ev.Time,
		SessionID:     ev.SessionID,
		RunID:         ev.RunID,
		ToolCallID:    ev.ToolCallID,
		CorrelationID: ev.CorrelationID,
		CausationID:   ev.CausationID,
		PrevHash:      ev.PrevHash,
		KeyID:         ev.KeyID,
		MAC:           ev.MAC,
		AppendID:      appendID,
	})
	if err != nil {
		return esdb.EventData{}, fmt.Errorf("encode metadata: %w", err)
	}
	return esdb.EventData{
		EventID:     ev.ID,
		EventType:   string(ev.Type),
		ContentType: esdb.ContentTypeJson,
		Data:        ev.Data,
		Metadata:    meta,
	}, nil
}

// unknownPosition is what servers report as the position of an event they
// do not know the position of (-1 as an unsigned number).
const unknownPosition = math.MaxUint64

// fromRecorded decodes a stored event. stream is the port's stream name.
// It returns the append id too. Errors wrap events.ErrMalformed.
func fromRecorded(r *esdb.RecordedEvent, stream string) (events.Event, string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: event %s at revision %d of %q: %s", events.ErrMalformed, r.EventID, r.EventNumber, r.StreamID, fmt.Sprintf(format, args...))
	}
	if ct := r.ContentType; !strings.HasPrefix(ct, contentTypeJSON) {
		return events.Event{}, "", bad("content type %q, want %s", ct, contentTypeJSON)
	}
	if len(r.Data) > 0 && !json.Valid(r.Data) {
		return events.Event{}, "", bad("data is not valid JSON")
	}
	var m Metadata
	if err := json.Unmarshal(r.UserMetadata, &m); err != nil {
		return events.Event{}, "", bad("metadata: %v", err)
	}
	if m.AppendID == "" {
		return events.Event{}, "", bad("metadata has no append_id: not written by this backend")
	}
	ev := events.Event{
		ID:            r.EventID,
		Stream:        stream,
		Version:       r.EventNumber + 1,
		Type:          events.Type(r.EventType),
		SchemaVersion: m.SchemaVersion,
		Time:          m.Time,
		SessionID:     m.SessionID,
		RunID:         m.RunID,
		ToolCallID:    m.ToolCallID,
		CorrelationID: m.CorrelationID,
		CausationID:   m.CausationID,
		PrevHash:      m.PrevHash,
		KeyID:         m.KeyID,
		MAC:           m.MAC,
	}
	if pos := r.Position.Commit; pos != unknownPosition {
		ev.Position = pos + 1
	}
	if len(r.Data) > 0 {
		ev.Data = json.RawMessage(r.Data)
	}
	return ev, m.AppendID, nil
}

// fromPosition is the esdb position a read or subscription "after" the
// port's position after starts from (0: the start).
func fromPosition(after uint64) esdb.AllPosition {
	if after == 0 {
		return esdb.Start{}
	}
	return esdb.Position{Commit: after - 1, Prepare: after - 1}
}

// toRevision maps an expected version to an expected revision.
func toRevision(e events.ExpectedVersion) esdb.ExpectedRevision {
	v, ok := e.Version()
	switch {
	case !ok:
		return esdb.Any{}
	case v == 0:
		return esdb.NoStream{}
	}
	return esdb.Revision(v - 1)
}
