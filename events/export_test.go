package events

import (
	"fmt"
	"reflect"
)

// DecodeFastPath decodes data as the current version of typ's data with
// fastDecode alone: the value, and whether the fast path took it.
func DecodeFastPath(typ Type, data []byte) (any, bool) {
	s := catalogue[typ]
	p := planOf(s.goType)
	if p == nil {
		return nil, false
	}
	v := reflect.New(s.goType).Elem()
	if !fastDecode(p, data, v) {
		return nil, false
	}
	return v.Interface(), true
}

// DecodeOldPath decodes data as Decode did before the fast path: with
// encoding/json and checkKeys alone, wrapped as Decode wraps its errors.
func DecodeOldPath(typ Type, data []byte) (any, error) {
	s := catalogue[typ]
	v := reflect.New(s.goType)
	if err := decodeStrict(data, v.Interface()); err != nil {
		return nil, &Error{Op: "decode", Err: fmt.Errorf("%w: %s version %d: %v", ErrMalformed, typ, s.current, err)}
	}
	return v.Elem().Interface(), nil
}
