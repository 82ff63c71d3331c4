package events

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"
	"time"
)

// Sealed data. A store never takes in an event its readers cannot decode,
// so PrepareAppend decodes every event's Data strictly (see Decode): for
// the events weft builds itself from the catalogue's structs, that work is
// done twice for nothing, since what the encoder writes for such a struct
// decodes by construction. NewData encodes a data struct and seals the
// result: it appends, past the end of the returned slice (in its spare
// capacity, so len, the bytes, json and cmp see none of it), a keyed hash
// of the event type, the schema version, the length and the bytes, under
// a seed that is random per process and never leaves this package.
// PrepareAppend checks the seal and skips the decode (and json.Valid) only
// when the seal matches the event it is given; anything else (Data built
// by hand, sealed Data altered, resliced or appended to, moved to an event
// of another type or schema version, or carrying a copied seal) fails the
// seal and is decoded strictly, refused with the same errors as before.
//
// The seal is a marker inside one process, not an authenticator: it is
// never stored or sent, and what fails it is only decoded, never trusted
// less. What it guards against is accident: a caller that changes, moves
// or reslices sealed bytes (or copies them with their spare capacity).
// Against that, a 64-bit hash/maphash hash keyed by a random seed (the
// runtime's map hash, AES-based where the CPU has AES) matches altered
// bytes with a probability of about 2^-64, as a truncated HMAC would, at a
// small fraction of its cost per byte (the seal is computed at NewData and
// checked at every append). A cryptographic MAC would buy nothing more:
// code in the same process that means to forge a seal can read the seed
// (or the key of a MAC) with package unsafe, and such code can write any
// event anyway.
//
// "Decodes by construction" is checked, not assumed: a type is sealed at
// encoding only if every field of its data struct, at any depth, is of a
// kind whose encoding/json encoding the strict decoder takes back (strings,
// numbers, booleans, slices, arrays and string-keyed maps of those, nested
// structs with exact, distinct JSON names and no embedded fields, pointers,
// json.RawMessage, time.Time). For a struct outside that set, NewData
// decodes its encoding once and seals it only if it decodes.

// sealLen is the length of a seal: a 64-bit hash/maphash hash, little
// endian.
const sealLen = 8

// sealSeed keys the seals of this process.
var sealSeed = maphash.MakeSeed()

// sealOf returns the seal of data as the Data of an event of typ at
// schema version sv: the hash of the hash of data, its length, sv and the
// hash of typ (each hash under sealSeed; the runtime hashes one slice in
// one call, where a streaming maphash.Hash would go 128 bytes at a time).
func sealOf(typ Type, sv int, data []byte) uint64 {
	var in [32]byte
	binary.LittleEndian.PutUint64(in[0:], maphash.Bytes(sealSeed, data))
	binary.LittleEndian.PutUint64(in[8:], uint64(len(data)))
	binary.LittleEndian.PutUint64(in[16:], uint64(int64(sv)))
	binary.LittleEndian.PutUint64(in[24:], maphash.String(sealSeed, string(typ)))
	return maphash.Bytes(sealSeed, in[:])
}

// seal returns data (which the caller owns, with sealLen bytes of
// capacity after its end, as marshalSealable leaves) with its seal for typ
// at sv in those bytes.
func seal(typ Type, sv int, data []byte) json.RawMessage {
	n := len(data)
	binary.LittleEndian.PutUint64(data[n:n+sealLen], sealOf(typ, sv, data))
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
	return binary.LittleEndian.Uint64(d[n:n+sealLen]) == sealOf(ev.Type, ev.SchemaVersion, d)
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
	raw, err := marshalSealable(data)
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
