package events

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// rawMessageType is json.RawMessage, whose content is not checked.
var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checkKeys reports object keys in data that do not exactly name a field of
// t (encoding/json matches keys case-insensitively, so "Agent" would
// silently fill Agent), at any depth. data must already have decoded into
// a value of type t without error.
func checkKeys(data []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) || t == rawMessageType {
		return nil
	}
	if pt := reflect.PointerTo(t); pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return nil // time.Time, uuid.UUID and the like decode themselves
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		fields := jsonFields(t)
		for k, v := range obj {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown field %q", path+k)
			}
			if err := checkKeys(v, ft, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			return err
		}
		for i, e := range elems {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s%d.", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		for k, v := range obj {
			if err := checkKeys(v, t.Elem(), path+k+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldsOf caches jsonFields by struct type: checkKeys asks for the same
// few structs on every append.
var fieldsOf sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of t's exported fields to their types.
// The catalogue's structs have no embedded fields. The map is shared: do
// not modify it.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldsOf.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := buildFields(t)
	fieldsOf.Store(t, f)
	return f
}

func buildFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}
