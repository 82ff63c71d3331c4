package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Private surfaces are the members of an event's data that only roles that
// may read the log see: debug evidence a tool left in its return's private
// metadata (panic stacks, host-only trace ids, tokens, personal data) and
// the error a tool returned, which the runtime captures there. The log
// keeps every event whole; the copies published live on the event subjects
// (the live copies) are passed through Redact first, so a subscriber to
// weft.evt.> never sees a private surface.
//
// privateSurfaces names them per type, as dotted paths into the data
// object. It is the one list both the redaction and its tests read; a type
// that is not in it has none.
var privateSurfaces = map[Type][]string{
	// The canonical return's private metadata (the captured error, a
	// panic's stack, what the tool put there), and the captured error
	// copied out of it.
	TypeToolReturned: {"return.private_metadata", "error"},
	// The error of a failed attempt the registry retried: the model never
	// sees it, it is the same captured error. Its kind stays.
	TypeToolRetried: {"error.message", "error.type"},
	// A deferred call's return, when the outside result carries private
	// metadata.
	TypeDeferredResolved: {"return.private_metadata"},
}

// PrivateSurfaces returns the dotted paths of the private members of typ's
// data ("return.private_metadata", …), nil when it has none.
func PrivateSurfaces(typ Type) []string {
	return append([]string(nil), privateSurfaces[typ]...)
}

// Redact returns the live copy of ev: ev itself when its data holds none of
// its type's private surfaces, else a copy whose Data lacks them and whose
// Redacted names the surfaces removed, in the order PrivateSurfaces lists
// them. The members left keep their values; the objects along a removed
// path are re-encoded with their keys sorted. ev is not changed.
//
// A redacted copy is not the stored event: its Hash differs, so a live
// subscriber cannot verify the chain link into or out of it (the next
// event's PrevHash is the stored event's hash); it verifies every event
// Redact left whole. The stores refuse to append an event with Redacted set.
//
// It fails, and nothing must be published, when Data is not a JSON object
// while its type has private surfaces, or a member on a path is not valid
// JSON.
func Redact(ev Event) (Event, error) {
	paths := privateSurfaces[ev.Type]
	if len(paths) == 0 || len(ev.Data) == 0 {
		return ev, nil
	}
	data := ev.Data
	var removed []string
	for _, p := range paths {
		out, ok, err := removePath(data, strings.Split(p, "."))
		if err != nil {
			return Event{}, &Error{Op: "redact", Stream: ev.Stream, Err: fmt.Errorf("%w: %s %s: %v", ErrMalformed, ev.Type, p, err)}
		}
		if ok {
			data, removed = out, append(removed, p)
		}
	}
	if len(removed) == 0 {
		return ev, nil
	}
	ev.Data = data
	ev.Redacted = append(append([]string(nil), ev.Redacted...), removed...)
	return ev, nil
}

// removePath removes the member at path from the JSON object data,
// reporting whether it was there. A path through a member that is not an
// object (or null) finds nothing.
func removePath(data json.RawMessage, path []string) (json.RawMessage, bool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, false, fmt.Errorf("not a JSON object: %w", err)
	}
	v, present := obj[path[0]]
	if !present {
		return data, false, nil
	}
	if len(path) == 1 {
		delete(obj, path[0])
	} else {
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
			return data, false, nil // not an object: nothing at the path
		}
		inner, ok, err := removePath(v, path[1:])
		if err != nil || !ok {
			return data, false, err
		}
		obj[path[0]] = inner
	}
	out, err := encodeObject(obj)
	return out, err == nil, err
}

// encodeObject encodes obj compactly with sorted keys, without escaping
// HTML characters (so the values keep their bytes).
func encodeObject(obj map[string]json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := newCompactEncoder(&b).Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
