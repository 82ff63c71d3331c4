package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// DefaultMaxDataBytes is the largest Data a backend accepts unless
// configured otherwise: 1 MiB.
const DefaultMaxDataBytes = 1 << 20

// PrepareAppend checks an append's arguments the way the Store contract
// requires and returns the events as they are to be stored: copies of evs
// with Stream set, Version, Position, PrevHash, KeyID, MAC and Blob cleared
// (the backend numbers, chains and keys them with Chain), and ID (a new UUIDv7), Time
// (now, UTC) and SchemaVersion (the type's current one, when the type is in
// the catalogue) filled where zero. Backends call it first in Append so that
// they all refuse the same inputs with the same errors:
//
//   - ErrInvalidStream for a name ValidateStream rejects;
//   - ErrEmptyAppend for no events;
//   - ErrInvalidEvent for an event without a Type, with Data that is not
//     valid JSON, with Redacted set (a live copy, see Redact), with Data
//     that is a blob reference (the store decides what goes to its blob
//     store: see OffloadBlobs), or with the same ID as another event of the
//     batch;
//   - ErrInvalidEvent together with ErrUnknownType, ErrUnknownSchemaVersion
//     or ErrMalformed (errors.Is matches both) for an event that Decode
//     would refuse: a type outside the catalogue, a schema version the
//     catalogue does not know for it, or Data that does not decode as the
//     type's data struct. A store never holds an event its readers cannot
//     decode (see "Poison" in the package doc for those already stored);
//   - ErrPayloadTooLarge for Data longer than maxData bytes (maxData <= 0
//     means DefaultMaxDataBytes).
//
// Data that NewData sealed for the event's type and schema version (New
// uses it) decodes by construction: it is neither validated nor decoded
// again. Any other Data, and sealed Data altered in any way, is checked as
// above (see "Sealed data" in sealed.go).
//
// Errors are *Error with Op "append".
func PrepareAppend(stream string, evs []Event, maxData int) ([]Event, error) {
	return PrepareAppendInto(nil, stream, evs, maxData)
}

// PrepareAppendInto is PrepareAppend, the prepared batch in dst's array
// when it has room (a backend that copies the batch away reuses one).
func PrepareAppendInto(dst []Event, stream string, evs []Event, maxData int) ([]Event, error) {
	if err := ValidateStream(stream); err != nil {
		var e *Error
		if errors.As(err, &e) {
			err = e.Err
		}
		return nil, &Error{Op: "append", Stream: stream, Err: err}
	}
	if len(evs) == 0 {
		return nil, &Error{Op: "append", Stream: stream, Err: ErrEmptyAppend}
	}
	if maxData <= 0 {
		maxData = DefaultMaxDataBytes
	}
	bad := func(i int, sentinel error, format string, args ...any) error {
		return &Error{Op: "append", Stream: stream, Err: fmt.Errorf("%w: event %d: %s", sentinel, i, fmt.Sprintf(format, args...))}
	}
	now := time.Now().UTC()
	out := slices.Grow(dst[:0], len(evs))[:len(evs)]
	// The batch's data is copied into one slice (of a shared chunk, see
	// carve), each event's capped.
	var size int
	for i := range evs {
		if len(evs[i].Data) > maxData {
			size = 0 // refused below: no room for the batch
			break
		}
		size += len(evs[i].Data)
	}
	var arena []byte
	if size > 0 {
		arena = batchChunks.carve(0, size)
	}
	var seen map[uuid.UUID]struct{} // for long batches; short ones scan out
	if len(evs) > 8 {
		seen = make(map[uuid.UUID]struct{}, len(evs))
	}
	for i, ev := range evs {
		if ev.SchemaVersion == 0 {
			ev.SchemaVersion, _ = ev.Type.SchemaVersion()
		}
		// Data NewData sealed for this type and version decodes by
		// construction: it is neither validated nor decoded again.
		sealed := isSealed(&ev)
		switch {
		case ev.Type == "":
			return nil, bad(i, ErrInvalidEvent, "no type")
		case ev.Type.LiveOnly():
			return nil, bad(i, ErrInvalidEvent, "%s is live output, published and never recorded", ev.Type)
		case len(ev.Data) > maxData:
			return nil, bad(i, ErrPayloadTooLarge, "data is %d bytes, limit %d", len(ev.Data), maxData)
		case !sealed && len(ev.Data) > 0 && !json.Valid(ev.Data):
			return nil, bad(i, ErrInvalidEvent, "data is not valid JSON")
		case len(ev.Redacted) > 0:
			return nil, bad(i, ErrInvalidEvent, "a live copy with %v redacted is not the event (Redact)", ev.Redacted)
		case IsBlobData(ev.Data):
			return nil, bad(i, ErrInvalidEvent, "data is a blob reference: append the content, the store keeps large data in its blob store")
		}
		if ev.ID == uuid.Nil {
			ev.ID = NewID()
		}
		if seen != nil {
			if _, dup := seen[ev.ID]; dup {
				return nil, bad(i, ErrInvalidEvent, "id %s appears twice in the batch", ev.ID)
			}
			seen[ev.ID] = struct{}{}
		} else if slices.ContainsFunc(out[:i], func(o Event) bool { return o.ID == ev.ID }) {
			return nil, bad(i, ErrInvalidEvent, "id %s appears twice in the batch", ev.ID)
		}
		if ev.Time.IsZero() {
			ev.Time = now
		}
		if !sealed {
			// Hand-built data: what Decode reads, and unambiguously so
			// (sealed data is encoded from a struct and has neither
			// problem).
			if err := refuseDuplicateKeys(ev.Data); len(ev.Data) > 0 && err != nil {
				return nil, &Error{Op: "append", Stream: stream, Err: fmt.Errorf("%w: event %d (%s): %w", ErrInvalidEvent, i, ev.Type, err)}
			}
			if _, err := Decode(ev); err != nil {
				var e *Error
				if errors.As(err, &e) {
					err = e.Err
				}
				return nil, &Error{Op: "append", Stream: stream, Err: fmt.Errorf("%w: event %d (%s): %w", ErrInvalidEvent, i, ev.Type, err)}
			}
		}
		ev.Stream, ev.Version, ev.Position, ev.PrevHash, ev.KeyID, ev.MAC, ev.Blob = stream, 0, 0, "", "", "", nil
		if ev.Data != nil {
			at := len(arena)
			arena = append(arena, ev.Data...)
			ev.Data = arena[at:len(arena):len(arena)]
		}
		out[i] = ev
	}
	return out, nil
}
