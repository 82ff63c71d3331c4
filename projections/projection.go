package projections

import (
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
	return Decoded{Event: ev, Data: data}, nil
}

// checkpoint is the position bookkeeping every projection embeds.
type checkpoint struct{ pos uint64 }

// Checkpoint returns the Position of the last applied event.
func (c *checkpoint) Checkpoint() uint64 { return c.pos }

// seen reports whether the event at pos was applied already.
func (c *checkpoint) seen(pos uint64) bool { return pos <= c.pos }
