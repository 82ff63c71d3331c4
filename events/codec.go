package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Option sets envelope fields in New.
type Option func(*Event)

// WithSession sets the session id.
func WithSession(id string) Option { return func(ev *Event) { ev.SessionID = id } }

// WithRun sets the run id.
func WithRun(id string) Option { return func(ev *Event) { ev.RunID = id } }

// WithToolCall sets the tool-call id.
func WithToolCall(id string) Option { return func(ev *Event) { ev.ToolCallID = id } }

// WithCorrelation sets the correlation id.
func WithCorrelation(id string) Option { return func(ev *Event) { ev.CorrelationID = id } }

// WithCausation sets the causation id.
func WithCausation(id string) Option { return func(ev *Event) { ev.CausationID = id } }

// WithCause records that cause led to the new event: the causation id is
// cause's ID and the correlation id is cause's correlation id (or cause's
// ID when it has none). Session, run and tool-call ids are copied from
// cause; options after WithCause can override them.
func WithCause(cause Event) Option {
	return func(ev *Event) {
		ev.CausationID = cause.ID.String()
		ev.CorrelationID = cause.CorrelationID
		if ev.CorrelationID == "" {
			ev.CorrelationID = cause.ID.String()
		}
		ev.SessionID, ev.RunID, ev.ToolCallID = cause.SessionID, cause.RunID, cause.ToolCallID
	}
}

// WithID sets the event id instead of a fresh one (for replays and tests).
func WithID(id uuid.UUID) Option { return func(ev *Event) { ev.ID = id } }

// WithTime sets the event time instead of now (for replays and tests).
func WithTime(t time.Time) Option { return func(ev *Event) { ev.Time = t } }

// New builds an event of type typ with data, ready to append: a fresh
// UUIDv7 ID (so a retried Append of the same event is idempotent), typ's
// current schema version, the current time in UTC and data encoded as
// JSON by NewData (sealed: stores take it in without decoding it again). data must be typ's data struct (the value or a pointer to it, see
// the catalogue), or nil for the struct's zero value.
//
// It returns an *Error wrapping ErrUnknownType for a type outside the
// catalogue and ErrMalformed for data of the wrong Go type.
func New(typ Type, data any, opts ...Option) (Event, error) {
	s, ok := catalogue[typ]
	if !ok {
		return Event{}, &Error{Op: "new event", Err: fmt.Errorf("%w: %q", ErrUnknownType, typ)}
	}
	if data == nil {
		data = reflect.New(s.goType).Elem().Interface()
	}
	raw, err := NewData(typ, data)
	if err != nil {
		return Event{}, err
	}
	ev := Event{ID: NewID(), Type: typ, SchemaVersion: s.current, Time: time.Now().UTC(), Data: raw}
	for _, o := range opts {
		o(&ev)
	}
	return ev, nil
}

// MustNew is New for data known to be right (tests, fixed events). It
// panics on error.
func MustNew(typ Type, data any, opts ...Option) Event {
	ev, err := New(typ, data, opts...)
	if err != nil {
		panic(err)
	}
	return ev
}

// Decode returns ev's data as the catalogue's struct value for its type
// (RunStarted for run.started, …), upcast to the current schema version.
// Empty Data decodes to the zero value.
//
// Errors are *Error with Op "decode" wrapping ErrUnknownType (type not in
// the catalogue), ErrUnknownSchemaVersion (a version the catalogue does not
// know for the type) or ErrMalformed (data that is not a JSON object of
// the struct's shape: invalid JSON, wrong field types, unknown fields,
// trailing data), or ErrUnresolvedBlob for Data that is a blob reference
// (see "Large payloads" in blob.go).
func Decode(ev Event) (any, error) {
	s, ok := catalogue[ev.Type]
	if !ok {
		return nil, &Error{Op: "decode", Stream: ev.Stream, Err: fmt.Errorf("%w: %q", ErrUnknownType, ev.Type)}
	}
	dec, ok := s.decode[ev.SchemaVersion]
	if !ok {
		return nil, &Error{Op: "decode", Stream: ev.Stream, Err: fmt.Errorf("%w: %s version %d (current %d)", ErrUnknownSchemaVersion, ev.Type, ev.SchemaVersion, s.current)}
	}
	if IsBlobData(ev.Data) {
		return nil, &Error{Op: "decode", Stream: ev.Stream, Err: fmt.Errorf("%w: %s version %d", ErrUnresolvedBlob, ev.Type, ev.SchemaVersion)}
	}
	v, err := dec(ev.Data)
	if err != nil {
		return nil, &Error{Op: "decode", Stream: ev.Stream, Err: fmt.Errorf("%w: %s version %d: %v", ErrMalformed, ev.Type, ev.SchemaVersion, err)}
	}
	return v, nil
}

// DecodeAs is Decode for callers that know which data struct to expect.
// Data of another struct (an event of another type) is ErrMalformed.
func DecodeAs[T any](ev Event) (T, error) {
	v, err := Decode(ev)
	if err != nil {
		var zero T
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return t, &Error{Op: "decode", Stream: ev.Stream, Err: fmt.Errorf("%w: data of %s is %T, not %T", ErrMalformed, ev.Type, v, t)}
	}
	return t, nil
}

// decodeStrict decodes one JSON object into v (a pointer), refusing unknown
// fields (also those that match a field only case-insensitively) and
// trailing data. Empty data leaves v at its zero value.
func decodeStrict(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	if data[0] != '{' {
		return errors.New("data is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return checkKeys(data, reflect.TypeOf(v), "")
}

// marshalSealable encodes v as compact JSON without HTML escaping (so
// that the bytes of embedded raw JSON are kept as they are), with sealLen
// bytes of capacity after the encoding (for seal): the result is cut from
// a shared chunk (see carve), the encoder and its buffer are pooled. The data structs of the events every
// run records have hand-written encoders (see encode_hot.go) that write
// the same bytes; the others, and a value a hand-written encoder fails on,
// go through marshalReflect. v is not a nil pointer (NewData refuses one).
func marshalSealable(v any) ([]byte, error) {
	if h, ok := v.(hotEncoder); ok {
		s := scratches.Get().(*scratch)
		b, err := h.appendJSON(s.b[:0])
		if err == nil {
			out := dataChunks.carve(len(b), sealLen)
			copy(out, b)
			if cap(b) <= 64<<10 {
				s.b = b[:0] // keep a grown one, not a large one
			}
			scratches.Put(s)
			return out, nil
		}
		scratches.Put(s)
	}
	return marshalReflect(v)
}

// scratch is a buffer the hand-written encoders write into before their
// output is carved; scratches pools them.
type scratch struct{ b []byte }

var scratches = sync.Pool{New: func() any { return &scratch{b: make([]byte, 0, 4<<10)} }}

// marshalReflect is marshalSealable with encoding/json (reflection), for
// any value.
func marshalReflect(v any) ([]byte, error) {
	e := encoders.Get().(*pooledEncoder)
	defer encoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))
	out := dataChunks.carve(len(b), sealLen)
	copy(out, b)
	if e.buf.Cap() > 64<<10 {
		e.buf = bytes.Buffer{} // do not keep a large one (enc writes to &e.buf)
	}
	return out, nil
}

// chunks are byte chunks that small slices are cut from (carve): one
// allocation per chunk, not per slice. Slices cut from one chunk should
// live about as long as each other, since any of them keeps the chunk:
// NewData's encodings (a run's events' data) come from one pool, the
// copies PrepareAppend makes of a batch's data (which a memory store keeps
// for good, and a store that sends them drops at once) from another.
type chunks struct {
	size int
	pool sync.Pool
}

type chunk struct{ b []byte }

var (
	dataChunks  = &chunks{size: 8 << 10}
	batchChunks = &chunks{size: 32 << 10}
)

// carve returns a slice of length n and capacity n+room cut from one of
// cs's chunks. Its capacity ends at n+room, so an append to it copies
// rather than writes over the next slice; a large one (over an eighth of
// a chunk) gets an allocation of its own.
func (cs *chunks) carve(n, room int) []byte {
	need := n + room
	if need > cs.size/8 {
		return make([]byte, n, need)
	}
	c, _ := cs.pool.Get().(*chunk)
	if c == nil {
		c = new(chunk)
	}
	if cap(c.b)-len(c.b) < need {
		c.b = make([]byte, 0, cs.size)
	}
	at := len(c.b)
	c.b = c.b[:at+need]
	out := c.b[at : at+n : at+need]
	cs.pool.Put(c)
	return out
}

type pooledEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &pooledEncoder{}
	e.enc = newCompactEncoder(&e.buf)
	return e
}}

// newCompactEncoder returns an encoder to w that writes compact JSON without
// escaping HTML characters (and a newline after each value).
func newCompactEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
