package projections

import (
	"bytes"
	"encoding/json"
)

// The views read two things out of raw JSON on every rebuild: the messages
// of a model request (a JSON array, split into its elements) and the kind,
// error flag and control reason of a tool return. encoding/json does both
// with a validating scan followed by a reflective decode that scans again;
// the functions here keep its validation (json.Valid, the same scanner)
// and replace the decode by one walk over the text, now known to be valid
// JSON. They take only the plain case (no escapes or non-ASCII bytes in
// the names and strings they read, no member named twice or named in
// another case) and say "not mine" otherwise, and their callers then use
// encoding/json: what the views read is what json.Unmarshal reads, as the
// differential tests in returnscan_test.go check.

// splitArray returns the elements of raw, a JSON array, as
// json.Unmarshal into a []json.RawMessage does (each element's bytes; an
// empty, non-nil slice for []), with ok false when raw is not a valid
// JSON array. The elements share one copy of raw.
func splitArray(raw []byte) (elems []json.RawMessage, ok bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	w := walker{data: raw}
	w.ws()
	if !w.consume('[') {
		return nil, false
	}
	buf := bytes.Clone(raw)
	elems = []json.RawMessage{}
	w.ws()
	if w.consume(']') {
		return elems, true
	}
	for {
		start := w.pos
		w.skip()
		elems = append(elems, buf[start:w.pos:w.pos])
		w.ws()
		if w.consume(']') {
			return elems, true
		}
		w.pos++ // ','
		w.ws()
	}
}

// fastReturn reads raw as parseReturn does, with ok false when it cannot
// tell (see above).
func fastReturn(raw []byte) (ri returnInfo, ok bool) {
	if !json.Valid(raw) {
		return returnInfo{}, false
	}
	w := walker{data: raw}
	w.ws()
	if !w.consume('{') {
		return returnInfo{}, false
	}
	var seen [3]bool
	ok = w.members(func(name []byte) bool {
		i := nameIndex(name, "kind", "is_error", "control")
		switch {
		case i == -1:
			w.skip()
			return true
		case i < 0:
			return false
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			var s bool
			ri.Kind, s = w.plainString()
			return s
		case 1:
			switch {
			case w.literal("true"):
				ri.IsError = true
			case w.literal("false"):
			default:
				return false
			}
			return true
		}
		if !w.consume('{') {
			return false
		}
		ri.Control = &struct {
			Reason string `json:"reason"`
		}{}
		var seenReason bool
		return w.members(func(name []byte) bool {
			switch nameIndex(name, "reason") {
			case -1:
				w.skip()
				return true
			case 0:
				if seenReason {
					return false
				}
				seenReason = true
				var s bool
				ri.Control.Reason, s = w.plainString()
				return s
			}
			return false
		})
	})
	return ri, ok
}

// nameIndex returns the index of name among names, -1 if it is none of
// them, and -2 if it matches one only case-insensitively (encoding/json
// would take it for that one) or is not plain (escapes, non-ASCII).
func nameIndex(name []byte, names ...string) int {
	for i, n := range names {
		if string(name) == n {
			return i
		}
	}
	for _, n := range names {
		if bytes.EqualFold(name, []byte(n)) {
			return -2
		}
	}
	for i := range len(name) {
		if name[i] >= 0x80 || name[i] == '\\' {
			return -2
		}
	}
	return -1
}

// walker walks JSON text known to be valid.
type walker struct {
	data []byte
	pos  int
}

func (w *walker) ws() {
	for w.pos < len(w.data) && (w.data[w.pos] == ' ' || w.data[w.pos] == '\t' || w.data[w.pos] == '\n' || w.data[w.pos] == '\r') {
		w.pos++
	}
}

func (w *walker) consume(b byte) bool {
	if w.pos < len(w.data) && w.data[w.pos] == b {
		w.pos++
		return true
	}
	return false
}

func (w *walker) literal(lit string) bool {
	if bytes.HasPrefix(w.data[w.pos:], []byte(lit)) {
		w.pos += len(lit)
		return true
	}
	return false
}

// str skips the string at the cursor and returns its content.
func (w *walker) str() []byte {
	w.pos++ // '"'
	start := w.pos
	for w.data[w.pos] != '"' {
		if w.data[w.pos] == '\\' {
			w.pos++
		}
		w.pos++
	}
	w.pos++
	return w.data[start : w.pos-1]
}

// plainString reads the string at the cursor when it is plain: no
// escapes, ASCII only.
func (w *walker) plainString() (string, bool) {
	if w.data[w.pos] != '"' {
		return "", false
	}
	s := w.str()
	for _, b := range s {
		if b >= 0x80 || b == '\\' {
			return "", false
		}
	}
	return string(s), true
}

// skip skips the value at the cursor.
func (w *walker) skip() {
	switch w.data[w.pos] {
	case '"':
		w.str()
	case '{', '[':
		depth := 0
		for {
			switch w.data[w.pos] {
			case '"':
				w.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.pos++
			if depth == 0 {
				return
			}
		}
	default: // a number, true, false or null
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			w.pos++
		}
	}
}

// members walks the members of the object whose '{' the cursor has just
// passed, calling member with each name, the cursor at its value; member
// reads or skips the value and reports whether to go on.
func (w *walker) members(member func(name []byte) bool) bool {
	w.ws()
	if w.consume('}') {
		return true
	}
	for {
		name := w.str()
		w.ws()
		w.pos++ // ':'
		w.ws()
		if !member(name) {
			return false
		}
		w.ws()
		if w.consume('}') {
			return true
		}
		w.pos++ // ','
		w.ws()
	}
}
