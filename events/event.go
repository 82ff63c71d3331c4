package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Event is the envelope of every recorded state change.
type Event struct {
	// ID identifies the event (UUIDv7, time-ordered). Appends are
	// idempotent by ID.
	ID uuid.UUID `json:"id"`
	// Stream, Version and Position are assigned by the store on append.
	Stream   string `json:"stream"`
	Version  uint64 `json:"version"`
	Position uint64 `json:"position"`
	// Type is one of the catalogue's types; SchemaVersion is the version of
	// its Data shape.
	Type          Type      `json:"type"`
	SchemaVersion int       `json:"schema_version"`
	Time          time.Time `json:"time"`
	// Ids of what the event is about (empty when not applicable).
	SessionID  string `json:"session_id,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// CorrelationID ties together every event caused by one command;
	// CausationID is the ID of the event or command that caused this one.
	CorrelationID string `json:"correlation_id,omitempty"`
	CausationID   string `json:"causation_id,omitempty"`
	// PrevHash is the Hash of the event before this one in its stream
	// ("" for version 1), assigned by the store on append: the link of the
	// stream's hash chain (see Hash and VerifyChain).
	PrevHash string `json:"prev_hash,omitempty"`
	// KeyID and MAC key the chain link, assigned by a store that holds
	// chain keys: MAC is the HMAC of the event's Hash under the key KeyID
	// names (see ChainKey), so that only the nodes that hold the key can
	// write a link that verifies. Hash does not cover them. Both are empty
	// for an event written without keys ("unkeyed").
	KeyID string `json:"key_id,omitempty"`
	MAC   string `json:"mac,omitempty"`
	// Data is the type-specific payload, JSON.
	Data json.RawMessage `json:"data,omitempty"`
	// Redacted is set only on a live copy (see Redact): the private
	// surfaces of Data that were removed before it was published, such as
	// "return.private_metadata". A stored event never has it; the stores
	// refuse to append one that does, and Hash does not cover it.
	Redacted []string `json:"redacted,omitempty"`
	// Blob is set on an event whose Data is kept in a blob store (see
	// "Large payloads" in blob.go): the store holds the event with Data
	// replaced by Blob.EventData(), which is what AppendJSON writes and
	// Hash covers, while Data here is the resolved content. Nil for
	// events stored inline. Stores set it; an appender's Blob is ignored.
	Blob *BlobRef `json:"blob,omitempty"`
}

// Type names an event type. The set is closed: see the catalogue in
// catalogue.go; Decode rejects any type not in it.
type Type string

// MaxStreamLen is the longest stream name, in bytes, any backend accepts.
const MaxStreamLen = 200

// ValidateStream reports whether name can be a stream name in every backend:
// 1..MaxStreamLen bytes of valid UTF-8 with no white space and no control
// characters. Backends escape the remaining characters as they need (see the
// bus package for NATS subjects). The error wraps ErrInvalidStream.
func ValidateStream(name string) error {
	bad := func(why string) error {
		return &Error{Op: "validate stream", Stream: name, Err: fmt.Errorf("%w: %s", ErrInvalidStream, why)}
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > MaxStreamLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxStreamLen))
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return bad(fmt.Sprintf("white space or control character at byte %d", i))
	}
	return nil
}

// SessionStream is the name of the stream that holds a session's events.
func SessionStream(sessionID string) string { return "session-" + sessionID }
