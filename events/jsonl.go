package events

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
)

// An Event encodes to JSON through its struct tags (encoding/json). The
// functions here decode envelopes strictly and read and write recorded
// histories as JSON Lines: one envelope per line, in log order, the format
// of golden event logs.

// ParseEvent decodes one JSON envelope. It is strict: unknown fields,
// fields of the wrong JSON type, trailing data, a missing id or type, or a
// stream name ValidateStream rejects are ErrMalformed (as an *Error with Op
// "parse event"). It does not decode Data; see Decode.
func ParseEvent(b []byte) (Event, error) {
	var ev Event
	if err := decodeStrict(b, &ev); err != nil {
		return Event{}, &Error{Op: "parse event", Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	bad := func(why string) (Event, error) {
		return Event{}, &Error{Op: "parse event", Stream: ev.Stream, Err: fmt.Errorf("%w: %s", ErrMalformed, why)}
	}
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return bad("empty")
	case ev.ID == uuid.Nil:
		return bad("no id")
	case ev.Type == "":
		return bad("no type")
	}
	if ev.Stream != "" {
		if err := ValidateStream(ev.Stream); err != nil {
			return bad(err.Error())
		}
	}
	return ev, nil
}

// WriteJSONL writes evs to w as JSON Lines: each envelope as compact JSON
// (HTML characters not escaped, so Data keeps its bytes) on its own line.
func WriteJSONL(w io.Writer, evs []Event) error {
	bw := bufio.NewWriter(w)
	enc := newCompactEncoder(bw) // compact, HTML not escaped, a newline after each
	for i, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			return &Error{Op: "write jsonl", Stream: ev.Stream, Err: fmt.Errorf("event %d: %w", i, err)}
		}
	}
	if err := bw.Flush(); err != nil {
		return &Error{Op: "write jsonl", Err: err}
	}
	return nil
}

// ReadJSONL reads JSON Lines written by WriteJSONL, parsing each non-blank
// line with ParseEvent. Lines may be of any length. A bad line is an error
// naming its line number and wrapping ErrMalformed.
func ReadJSONL(r io.Reader) ([]Event, error) {
	br := bufio.NewReader(r)
	var evs []Event
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &Error{Op: "read jsonl", Err: fmt.Errorf("line %d: %w", line, err)}
		}
		if len(bytes.TrimSpace(b)) > 0 {
			ev, perr := ParseEvent(b)
			if perr != nil {
				return nil, &Error{Op: "read jsonl", Err: fmt.Errorf("line %d: %w", line, perr)}
			}
			evs = append(evs, ev)
		}
		if err != nil { // io.EOF
			return evs, nil
		}
	}
}
