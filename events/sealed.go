package events

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Sealed data. A store never takes in an event its readers cannot decode,
// so PrepareAppend decodes every event's Data strictly (see Decode): for
// the events weft builds itself from the catalogue's structs, that work is
// done twice for nothing, since what the encoder writes for such a struct
// decodes by construction. NewData encodes a data struct and seals the
// result: it appends, past the end of the returned slice (in its spare
// capacity, so len, the bytes, json and cmp see none of it), an HMAC of
// the event type, the schema version and the bytes under a key that is
// random per process and never leaves this package. PrepareAppend checks
// the seal and skips the decode (and json.Valid) only when the seal
// matches the event it is given; anything else (Data built by hand,
// sealed Data altered, resliced or appended to, moved to an event of
// another type or schema version, or carrying a copied seal) fails the
// seal and is decoded strictly, refused with the same errors as before.
//
// "Decodes by construction" is checked, not assumed: a type is sealed at
// encoding only if every field of its data struct, at any depth, is of a
// kind whose encoding/json encoding the strict decoder takes back (strings,
// numbers, booleans, slices, arrays and string-keyed maps of those, nested
// structs with exact, distinct JSON names and no embedded fields, pointers,
// json.RawMessage, time.Time). For a struct outside that set, NewData
// decodes its encoding once and seals it only if it decodes.

// sealLen is the length of a seal: a truncated HMAC-SHA-256.
const sealLen = 16

// sealKey keys the seals of this process.
var sealKey = func() []byte {
	k := make([]byte, 32)
	rand.Read(k) // crypto/rand.Read does not fail (it aborts the program)
	return k
}()

// sealers pools the HMACs that compute seals.
var sealers = sync.Pool{New: func() any { return &sealer{mac: hmac.New(sha256.New, sealKey)} }}

type sealer struct {
	mac hash.Hash
	buf [sha256.Size]byte
	hdr []byte
}

// sum returns the seal of data as the Data of an event of typ at schema
// version sv, in s's buffer.
func (s *sealer) sum(typ Type, sv int, data []byte) []byte {
	s.hdr = binary.BigEndian.AppendUint64(s.hdr[:0], uint64(len(typ)))
	s.hdr = append(s.hdr, typ...)
	s.hdr = binary.BigEndian.AppendUint64(s.hdr, uint64(int64(sv)))
	s.mac.Reset()
	s.mac.Write(s.hdr)
	s.mac.Write(data)
	return s.mac.Sum(s.buf[:0])[:sealLen]
}

// seal returns data (which the caller owns) with its seal for typ at sv
// in the sealLen bytes after its end.
func seal(typ Type, sv int, data []byte) json.RawMessage {
	n := len(data)
	if cap(data)-n < sealLen {
		data = append(make([]byte, 0, n+sealLen), data...)
	}
	s := sealers.Get().(*sealer)
	copy(data[n:n+sealLen], s.sum(typ, sv, data))
	sealers.Put(s)
	return data[: n : n+sealLen]
}

// isSealed reports whether ev's Data carries the seal NewData gave it for
// ev's Type and SchemaVersion.
func isSealed(ev *Event) bool {
	d := ev.Data
	n := len(d)
	if n == 0 || cap(d)-n < sealLen {
		return false
	}
	s := sealers.Get().(*sealer)
	ok := hmac.Equal(d[n:n+sealLen], s.sum(ev.Type, ev.SchemaVersion, d))
	sealers.Put(s)
	return ok
}

// NewData encodes data, the data struct of typ (the value or a non-nil
// pointer to it, see the catalogue), as the sealed Data of an event of typ
// at its current schema version: compact JSON without HTML escaping,
// which stores take in without decoding it again (see "Sealed data"
// above). Events built with it must keep typ and the current schema
// version (New does both).
//
// It returns an *Error with Op "new event" wrapping ErrUnknownType for a
// type outside the catalogue and ErrMalformed for data of the wrong Go
// type, a nil pointer, or data that does not encode.
func NewData(typ Type, data any) (json.RawMessage, error) {
	s, ok := catalogue[typ]
	if !ok {
		return nil, &Error{Op: "new event", Err: fmt.Errorf("%w: %q", ErrUnknownType, typ)}
	}
	if rt := reflect.TypeOf(data); rt != s.goType && rt != reflect.PointerTo(s.goType) {
		return nil, &Error{Op: "new event", Err: fmt.Errorf("%w: data of %s is %s, not %s", ErrMalformed, typ, rt, s.goType)}
	}
	if v := reflect.ValueOf(data); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, &Error{Op: "new event", Err: fmt.Errorf("%w: data of %s is a nil %s", ErrMalformed, typ, v.Type())}
	}
	raw, err := marshalRoom(data, sealLen)
	if err != nil {
		return nil, &Error{Op: "new event", Err: fmt.Errorf("%w: encode data of %s: %v", ErrMalformed, typ, err)}
	}
	if !s.sealable {
		if _, err := s.decode[s.current](raw); err != nil {
			return nil, &Error{Op: "new event", Err: fmt.Errorf("%w: data of %s does not decode: %v", ErrMalformed, typ, err)}
		}
	}
	return seal(typ, s.current, raw), nil
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// decodesByConstruction reports whether what encoding/json writes for any
// value of t is taken back by decodeStrict (see "Sealed data").
func decodesByConstruction(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && encodesStrictly(t, map[reflect.Type]bool{})
}

func encodesStrictly(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == rawMessageType || t == timeType {
		return true
	}
	if t.Kind() == reflect.Pointer {
		return encodesStrictly(t.Elem(), seen)
	}
	for _, it := range []reflect.Type{marshalerType, textMarshaler, unmarshalerType, textUnmarshalerType} {
		if t.Implements(it) || reflect.PointerTo(t).Implements(it) {
			return false // a codec of its own: no guarantee it round-trips
		}
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice, reflect.Array:
		return encodesStrictly(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && encodesStrictly(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return true
		}
		seen[t] = true
		names := map[string]bool{}
		for f := range t.Fields() {
			if f.Anonymous {
				return false
			}
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			if name == "-" || names[strings.ToLower(name)] || !encodesStrictly(f.Type, seen) {
				return false
			}
			names[strings.ToLower(name)] = true
		}
		return true
	}
	return false // interfaces, channels, functions, complex numbers
}
