package events

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The fast path of decodeStrict. Every reader of the log (a projection
// rebuild, a recovery, a replay) decodes every event's data strictly, and
// encoding/json with the strictness check (checkKeys) costs several times
// the rest of a rebuild. A data struct of the catalogue has a plan, built
// once from its type, and fastDecode decodes data with it in one pass
// over the bytes, with no maps and few allocations.
//
// The fast path only ever says yes or "not mine". It takes data in the
// shape weft writes (and anything else that is plainly the same JSON):
// one object whose members each exactly name a distinct field of the
// struct, of the field's JSON kind, with no escapes in member names, no
// numbers that need rounding into an integer field, no nesting deeper
// than maxScanDepth. Everything else (malformed or trailing data, unknown
// or case-folded names, a member named twice, a type error, an overflow,
// a null where the field's own decoder would be called, space
// encoding/json does not skip) is "not mine": decodeStrict then decodes
// with encoding/json exactly as before and accepts or refuses with the
// same error. So what is refused, and why, is decided as it always was;
// the fast path must only never accept what encoding/json refuses and
// always yield the value it yields, which the differential tests and the
// fuzz target in fastdecode_test.go check against the old path.

// planKind is how the fast path decodes a value of a field's type.
type planKind uint8

const (
	planString planKind = iota
	planBool
	planInt
	planUint
	planFloat
	planRaw    // json.RawMessage: any JSON value, kept as its bytes
	planTime   // time.Time: its UnmarshalJSON
	planPtr    // a pointer to a value of elem
	planSlice  // a slice of elem
	planMap    // a map of string keys to elem
	planStruct // an object of fields
)

type plan struct {
	kind   planKind
	typ    reflect.Type
	elem   *plan       // planPtr, planSlice, planMap
	fields []planField // planStruct, at most 64
}

type planField struct {
	name  string
	index int
	plan  *plan
}

// planOf returns the plan of t, or nil if the fast path does not take t:
// it takes only the kinds listed in planKind, structs without embedded
// fields or the ",string" option whose JSON names are distinct even case
// folded, and maps with plain string keys.
func planOf(t reflect.Type) *plan {
	return buildPlan(t, map[reflect.Type]*plan{})
}

func buildPlan(t reflect.Type, seen map[reflect.Type]*plan) *plan {
	if p, ok := seen[t]; ok {
		return p // a recursive type: the plan being built
	}
	switch t {
	case rawMessageType:
		return &plan{kind: planRaw, typ: t}
	case timeType:
		return &plan{kind: planTime, typ: t}
	}
	for _, it := range []reflect.Type{unmarshalerType, textUnmarshalerType} {
		if t.Kind() != reflect.Pointer && (t.Implements(it) || reflect.PointerTo(t).Implements(it)) {
			return nil // a decoder of its own
		}
	}
	p := &plan{typ: t}
	switch t.Kind() {
	case reflect.String:
		p.kind = planString
	case reflect.Bool:
		p.kind = planBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = planInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.kind = planUint
	case reflect.Float32, reflect.Float64:
		p.kind = planFloat
	case reflect.Pointer, reflect.Slice, reflect.Map:
		switch {
		case t.Kind() == reflect.Pointer:
			p.kind = planPtr
		case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8: // []byte is base64
			p.kind = planSlice
		case t.Kind() == reflect.Map && t.Key() == stringType:
			p.kind = planMap
		default:
			return nil
		}
		seen[t] = p
		if p.elem = buildPlan(t.Elem(), seen); p.elem == nil {
			return nil
		}
	case reflect.Struct:
		p.kind = planStruct
		seen[t] = p
		folded := map[string]bool{}
		for f := range t.Fields() {
			if f.Anonymous {
				return nil
			}
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !validName(name) {
				return nil
			}
			for o := range strings.SplitSeq(opts, ",") {
				if o == "string" {
					return nil
				}
			}
			if folded[strings.ToLower(name)] {
				return nil
			}
			folded[strings.ToLower(name)] = true
			fp := buildPlan(f.Type, seen)
			if fp == nil {
				return nil
			}
			p.fields = append(p.fields, planField{name: name, index: f.Index[0], plan: fp})
		}
		if len(p.fields) > 64 {
			return nil
		}
	default:
		return nil
	}
	return p
}

// validName reports whether name is one the fast path takes as a member
// name: ASCII letters, digits and underscores (encoding/json takes more,
// and replaces a tag name it does not take by the Go field's name).
func validName(name string) bool {
	for _, r := range name {
		if !(r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return name != ""
}

var stringType = reflect.TypeFor[string]()

// fastDecoder is the state of one fastDecode.
type fastDecoder struct {
	cursor
	// raw is the copy of data that RawMessage fields are slices of (cut
	// to their length and capacity), made at the first one: one copy per
	// event, as encoding/json copies each.
	raw []byte
}

// fastDecode decodes data into v (the addressable, zero value of p's
// struct type), as decodeStrict would, and reports whether it did; on
// false, v holds garbage.
func fastDecode(p *plan, data []byte, v reflect.Value) bool {
	d := fastDecoder{cursor: cursor{data: data}}
	d.ws()
	if d.pos == len(data) {
		return true // empty data: the zero value
	}
	if d.peek() != '{' || !d.object(p, v) {
		return false
	}
	d.ws()
	return d.pos == len(data)
}

// object decodes the object at the cursor into the struct v.
func (d *fastDecoder) object(p *plan, v reflect.Value) bool {
	d.pos++ // '{'
	d.ws()
	if d.consume('}') {
		return true
	}
	var seen uint64
	for {
		name, plain, ok := d.str()
		if !ok || !plain {
			return false
		}
		i := p.field(name)
		if i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		d.ws()
		if !d.consume(':') {
			return false
		}
		d.ws()
		f := &p.fields[i]
		if !d.value(f.plan, v.Field(f.index)) {
			return false
		}
		d.ws()
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
		d.ws()
	}
}

// field returns the index in p.fields of the field named name, or -1.
func (p *plan) field(name []byte) int {
	for i := range p.fields {
		if p.fields[i].name == string(name) {
			return i
		}
	}
	return -1
}

// value decodes the value at the cursor into v, of p's type, which holds
// its zero value.
func (d *fastDecoder) value(p *plan, v reflect.Value) bool {
	if p.kind == planRaw {
		text, ok := d.skipValue()
		if !ok {
			return false
		}
		if d.raw == nil {
			d.raw = bytes.Clone(d.data)
		}
		start := d.pos - len(text)
		v.SetBytes(d.raw[start:d.pos:d.pos])
		return true
	}
	if d.peek() == 'n' {
		// null leaves a value as it is (the zero value) and sets a
		// pointer, slice or map to nil (which it is); a time.Time's own
		// decoder would see it.
		return p.kind != planTime && d.literal("null")
	}
	switch p.kind {
	case planString:
		s, ok := d.string()
		v.SetString(s)
		return ok
	case planBool:
		switch {
		case d.literal("true"):
			v.SetBool(true)
		case d.literal("false"):
		default:
			return false
		}
		return true
	case planInt, planUint:
		text, integer, ok := d.number()
		if !ok || !integer {
			return false
		}
		return setInteger(v, p.kind == planInt, text)
	case planFloat:
		text, _, ok := d.number()
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(text), v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return false
		}
		v.SetFloat(f)
		return true
	case planTime:
		text, ok := d.skipValue()
		return ok && v.Addr().Interface().(*time.Time).UnmarshalJSON(text) == nil
	case planPtr:
		e := reflect.New(p.typ.Elem())
		if !d.value(p.elem, e.Elem()) {
			return false
		}
		v.Set(e)
		return true
	case planSlice:
		return d.slice(p, v)
	case planMap:
		return d.mapObject(p, v)
	case planStruct:
		return d.peek() == '{' && d.object(p, v)
	}
	return false
}

// string decodes the string at the cursor.
func (d *fastDecoder) string() (string, bool) {
	start := d.pos
	content, plain, ok := d.str()
	switch {
	case !ok:
		return "", false
	case plain || !bytes.ContainsRune(content, '\\') && utf8.Valid(content):
		return string(content), true
	}
	// Escapes, or bytes that are not UTF-8 (which become U+FFFD):
	// encoding/json's own unquoting.
	var s string
	err := json.Unmarshal(d.data[start:d.pos], &s)
	return s, err == nil
}

// setInteger sets v (signed or not) to the integer text, if it fits.
func setInteger(v reflect.Value, signed bool, text []byte) bool {
	neg := text[0] == '-'
	if neg {
		if !signed {
			return false
		}
		text = text[1:]
	}
	var n uint64
	for _, b := range text {
		digit := uint64(b - '0')
		if n > (math.MaxUint64-digit)/10 {
			return false
		}
		n = n*10 + digit
	}
	if !signed {
		if v.OverflowUint(n) {
			return false
		}
		v.SetUint(n)
		return true
	}
	var i int64
	switch {
	case neg && n <= 1<<63:
		i = int64(-n) // -n wraps to the two's complement for n = 1<<63
	case !neg && n < 1<<63:
		i = int64(n)
	default:
		return false
	}
	if v.OverflowInt(i) {
		return false
	}
	v.SetInt(i)
	return true
}

// slice decodes the array at the cursor into the slice v: a new slice of
// exactly its length (an empty, non-nil one for []), as encoding/json
// makes for a nil slice.
func (d *fastDecoder) slice(p *plan, v reflect.Value) bool {
	if !d.consume('[') {
		return false
	}
	// Count the elements first, to allocate once.
	start := d.pos
	n := 0
	d.ws()
	if !d.consume(']') {
		for {
			if _, ok := d.skipValue(); !ok {
				return false
			}
			n++
			d.ws()
			if d.consume(']') {
				break
			}
			if !d.consume(',') {
				return false
			}
			d.ws()
		}
	}
	end := d.pos
	s := reflect.MakeSlice(p.typ, n, n)
	d.pos = start
	for i := range n {
		d.ws()
		if !d.value(p.elem, s.Index(i)) {
			return false
		}
		d.ws()
		d.pos++ // ',' or ']', as counted
	}
	if n == 0 {
		d.pos = end
	}
	v.Set(s)
	return true
}

// mapObject decodes the object at the cursor into the map v: a new map
// (an empty, non-nil one for {}); a name given twice keeps its last
// value, as in encoding/json.
func (d *fastDecoder) mapObject(p *plan, v reflect.Value) bool {
	if !d.consume('{') {
		return false
	}
	m := reflect.MakeMap(p.typ)
	elem := reflect.New(p.typ.Elem()).Elem()
	d.ws()
	if !d.consume('}') {
		for {
			name, plain, ok := d.str()
			if !ok || !plain {
				return false
			}
			d.ws()
			if !d.consume(':') {
				return false
			}
			d.ws()
			elem.SetZero()
			if !d.value(p.elem, elem) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(string(name)), elem)
			d.ws()
			if d.consume('}') {
				break
			}
			if !d.consume(',') {
				return false
			}
			d.ws()
		}
	}
	v.Set(m)
	return true
}
