package projections

import (
	"encoding/json"
	"io"

	"github.com/weft-run/weft/events"
)

// Projection is a view folded from the log. Implementations are not safe
// for concurrent use: one Runner (or one goroutine) applies events, and
// readers wait until it is done or synchronise themselves.
type Projection interface {
	// Name names the projection in errors and progress ("archive", …).
	Name() string
	// Checkpoint is the Position of the last event applied, 0 before any.
	// It is where a catch-up resumes.
	Checkpoint() uint64
	// Apply folds one decoded event into the view. An event whose
	// Position is at or below Checkpoint is a no-op (so a replay from an
	// earlier position, or an event delivered twice, changes nothing).
	// An event the view cannot fold is an error; the checkpoint does not
	// move past it.
	Apply(ev Decoded) error
	// Reset empties the view and sets the checkpoint back to 0.
	Reset()
	// Render writes the whole view as deterministic, indented JSON
	// (sessions sorted by id, slices in log order), so that two views of
	// the same events render to the same bytes.
	Render(w io.Writer) error
}

// Decoded is an event with its data decoded to the catalogue's struct
// (events.Decode), so that the Runner decodes each event once for all
// projections.
type Decoded struct {
	events.Event
	// Data is the catalogue's data struct for Type (a value, not a
	// pointer: events.RunStarted for run.started, …).
	Data any
	// ret is what the views read of a tool.returned's return, parsed at
	// the first ask and shared by every projection the Runner applies the
	// event to; nil in a Decoded not built by Decode.
	ret *sharedReturn
}

// sharedReturn is the return a Decoded's projections read, parsed once.
type sharedReturn struct {
	once   bool
	info   returnInfo
	source json.RawMessage // the Return it was parsed from
}

// returnInfo returns what the views read of raw, ev's return: parsed
// once per event when Decode built ev.
func (ev Decoded) returnInfo(raw json.RawMessage) returnInfo {
	r := ev.ret
	if r == nil || !sameBytes(r.source, raw) {
		return parseReturn(raw)
	}
	if !r.once {
		r.info, r.once = parseReturn(raw), true
	}
	return r.info
}

// suspendReason returns the control reason of raw, ev's return, when it
// suspends (approval_required, call_deferred), "" for any other return. It
// reads the return only when it mentions a suspension, so ordinary returns
// cost a byte search.
func (ev Decoded) suspendReason(raw json.RawMessage) string {
	if !mentionsControl(raw) {
		return ""
	}
	return ev.returnInfo(raw).suspendReason()
}

// sameBytes reports whether a and b are the same slice (not only equal
// bytes).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Decode decodes ev's data for Apply. Errors are an *Error with Op
// "decode" wrapping the events package's decoding error
// (events.ErrUnknownType, events.ErrUnknownSchemaVersion,
// events.ErrMalformed).
func Decode(ev events.Event) (Decoded, error) {
	data, err := events.Decode(ev)
	if err != nil {
		return Decoded{}, &Error{Op: "decode", Position: ev.Position, Type: ev.Type, Err: err}
	}
	d := Decoded{Event: ev, Data: data}
	if r, ok := data.(events.ToolReturned); ok {
		d.ret = &sharedReturn{source: r.Return}
	}
	return d, nil
}

// checkpoint is the position bookkeeping every projection embeds.
type checkpoint struct{ pos uint64 }

// Checkpoint returns the Position of the last applied event.
func (c *checkpoint) Checkpoint() uint64 { return c.pos }

// seen reports whether the event at pos was applied already.
func (c *checkpoint) seen(pos uint64) bool { return pos <= c.pos }
