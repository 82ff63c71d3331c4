package codemode

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/weft-run/weft/toolsets"
)

// Object is a live application object a program can use directly: read
// its attributes and call its methods, with no tool in between (reads
// close to the object model, as the seed puts it; side effects belong in
// tools). A host registers objects by name in [Env.Objects]; a program's
// variable that holds one is kept as a handle, its registered name, and
// bound again by that name after a restart.
//
// Attr is called from the program's goroutine, never concurrently for
// one program; it must not block for long (the program's wall-time limit
// runs meanwhile).
type Object interface {
	// Attr returns the attribute name: a value (see [Env] for the values
	// a program can hold) or a [Method]. ok is false when there is none.
	Attr(name string) (v any, ok bool)
	// AttrNames lists the attributes, for dir() and docstr.
	AttrNames() []string
	// Repr is how the object is shown to the model ([Render]).
	Repr() string
}

// Method is a method of an [Object]: it takes the program's positional
// and keyword arguments, as Go values, and returns a value or an error
// (which stops the program with its message).
type Method func(args []any, kwargs map[string]any) (any, error)

// Documented is an [Object] that describes itself for docstr.
type Documented interface {
	Doc() string
}

// Struct returns an [Object] whose attributes are the exported fields of
// the struct v (or *v) under their JSON names (the field name when there
// is no json tag), read-only. Values a program gets from methods or tools
// that are structs are shown the same way without being registered.
func Struct(v any) Object {
	return structObject{v: v}
}

// asObject returns v when it is an [Object], else [Struct](v).
func asObject(v any) Object {
	if o, ok := v.(Object); ok {
		return o
	}
	return Struct(v)
}

type structObject struct{ v any }

func (s structObject) fields() (reflect.Value, []reflect.StructField) {
	rv := reflect.ValueOf(s.v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return reflect.Value{}, nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return reflect.Value{}, nil
	}
	var fs []reflect.StructField
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if f.IsExported() && toolsets.JSONName(f) != "" {
			fs = append(fs, f)
		}
	}
	return rv, fs
}

func (s structObject) Attr(name string) (any, bool) {
	rv, fs := s.fields()
	for _, f := range fs {
		if toolsets.JSONName(f) == name {
			return rv.FieldByIndex(f.Index).Interface(), true
		}
	}
	return nil, false
}

func (s structObject) AttrNames() []string {
	_, fs := s.fields()
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, toolsets.JSONName(f))
	}
	sort.Strings(out)
	return out
}

func (s structObject) Repr() string {
	if r, ok := s.v.(interface{ Repr() string }); ok {
		return r.Repr()
	}
	return Render(s.v)
}

// value returns the struct itself, for encoding.
func (s structObject) value() any { return s.v }

func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "None"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" {
		return t.Name()
	}
	return fmt.Sprint(t)
}
