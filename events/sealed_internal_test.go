package events

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestCatalogueDecodesByConstruction: every data struct of the catalogue
// is of the shape whose encoding decodes by construction, so NewData seals
// without decoding; and, checking the claim itself, the encodings of many
// random values of each decode strictly.
func TestCatalogueDecodesByConstruction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, typ := range Types() {
		s := catalogue[typ]
		if !s.sealable {
			t.Errorf("%s: data struct %s is not one that decodes by construction", typ, s.goType)
		}
		for i := range 200 {
			v := reflect.New(s.goType)
			fill(rng, v.Elem(), 0)
			data, err := NewData(typ, v.Interface())
			if err != nil {
				t.Fatalf("%s: NewData of random value %d: %v", typ, i, err)
			}
			if _, err := s.decode[s.current](data); err != nil {
				t.Fatalf("%s: the encoding of random value %d does not decode: %v\n%s", typ, i, err, data)
			}
		}
	}
}

// fill sets v to a random value of its type, with nil and empty values
// among them.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == rawMessageType {
		docs := []string{``, `null`, `{}`, `{"a":[1,2.5,"<&>"],"B":{"c":null}}`, `"s"`, `[ 1 , 2 ]`, `true`}
		if d := docs[rng.IntN(len(docs))]; d != "" {
			v.SetBytes([]byte(d))
		}
		return
	}
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		strs := []string{"", "x", "<script>&amp;</script>", "héllo ✓", "quote \" and \\ back", "\u2028", "\xff bad utf-8", "Agent"}
		v.SetString(strs[rng.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64() >> (65 - v.Type().Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64() >> (64 - v.Type().Bits()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e6)
	case reflect.Pointer:
		if rng.IntN(3) > 0 && depth < 4 {
			p := reflect.New(v.Type().Elem())
			fill(rng, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		if n := rng.IntN(4); n > 0 && depth < 4 {
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		if n := rng.IntN(4); n > 0 && depth < 4 {
			m := reflect.MakeMap(v.Type())
			for i := range n {
				e := reflect.New(v.Type().Elem()).Elem()
				fill(rng, e, depth+1)
				m.SetMapIndex(reflect.ValueOf(fmt.Sprintf("k%d", i)).Convert(v.Type().Key()), e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	default:
		panic("fill: no random values of " + v.Type().String())
	}
}

// custom has a codec of its own.
type custom struct{}

func (custom) MarshalJSON() ([]byte, error) { return []byte(`{"other":1}`), nil }

type inner struct{ A string }

// TestDecodesByConstructionRefuses: shapes whose encoding the strict decoder
// may refuse are not sealed without a decode.
func TestDecodesByConstructionRefuses(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
	}{
		{"interface field", reflect.TypeFor[struct{ V any }]()},
		{"embedded struct", reflect.TypeFor[struct{ inner }]()},
		{"names equal but for case", reflect.TypeFor[struct {
			A string `json:"name"`
			B string `json:"Name"`
		}]()},
		{"field with its own codec", reflect.TypeFor[struct{ C custom }]()},
		{"map with int keys", reflect.TypeFor[struct{ M map[int]string }]()},
		{"complex number", reflect.TypeFor[struct{ C complex128 }]()},
		{"not a struct", reflect.TypeFor[[]string]()},
	}
	for _, tc := range cases {
		if decodesByConstruction(tc.typ) {
			t.Errorf("%s: %s is taken to decode by construction", tc.name, tc.typ)
		}
	}
	if !decodesByConstruction(reflect.TypeFor[struct {
		A string `json:"a,omitempty"`
		B []map[string]*inner
		T time.Time
		R json.RawMessage
		S string `json:"-"`
	}]()) {
		t.Error("a struct of plain fields is not taken to decode by construction")
	}
}

// TestSealDetectsChanges: the seal matches the bytes, type and schema
// version NewData sealed and nothing else: not the data with any one bit
// of any byte flipped (even where the result still decodes, which the
// refusal tests of sealed_test.go cannot show), not other data of the same
// length carrying the copied seal, not the data under another type or
// schema version.
func TestSealDetectsChanges(t *testing.T) {
	data, err := NewData(TypeToolReturned, ToolReturned{Tool: "tool", Return: json.RawMessage(`{"ok":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	ev := Event{Type: TypeToolReturned, SchemaVersion: 1, Data: data}
	if !isSealed(&ev) {
		t.Fatal("the data NewData sealed is not sealed")
	}
	for i := range data {
		for bit := range 8 {
			changed := ev
			changed.Data = append(make([]byte, 0, cap(data)), data[:cap(data)]...)[:len(data)]
			changed.Data[i] ^= 1 << bit
			if isSealed(&changed) {
				t.Errorf("byte %d with bit %d flipped (%s) is still sealed", i, bit, changed.Data)
			}
		}
	}
	other := append([]byte(`{"tool":"TOOL","return":{"ok":true}}`), data[len(data):cap(data)]...)
	if len(other)-sealLen != len(data) {
		t.Fatal("the other data must be as long as the sealed one")
	}
	copied := ev
	copied.Data = other[:len(data)]
	if isSealed(&copied) {
		t.Errorf("other data carrying a copied seal is sealed")
	}
	for _, moved := range []Event{
		{Type: TypeRunStarted, SchemaVersion: 1, Data: data},
		{Type: TypeToolReturned, SchemaVersion: 2, Data: data},
	} {
		if isSealed(&moved) {
			t.Errorf("the sealed data moved to %s at version %d is still sealed", moved.Type, moved.SchemaVersion)
		}
	}
}
