package codemode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"time"

	"go.starlark.net/starlark"

	"github.com/weft-run/weft/toolsets"
)

// Values cross between Go and the program: Go values become Starlark
// values when a program reads an attribute, a method's or a tool's result;
// Starlark values become JSON-encodable Go values when the program passes
// them to a tool or keeps them as durable variables.
//
// Go to Starlark: nil is None; booleans, integers, floats and strings are
// themselves; a time.Time is its RFC 3339 string, a toolsets.Date or
// TimeOfDay its ISO string (the registry converts them back where a
// parameter wants a time); slices are lists, maps with string keys dicts;
// an [Object] (or a struct, through [Struct]) is an object value with
// attributes; a [Method] is a function.

// objectValue is an object in the program.
type objectValue struct {
	obj  Object
	name string // the name it is registered under in Env.Objects ("" for none)
}

var (
	_ starlark.HasAttrs = objectValue{}
)

func (o objectValue) String() string        { return o.obj.Repr() }
func (o objectValue) Type() string          { return typeName(o.goValue()) }
func (o objectValue) Freeze()               {}
func (o objectValue) Truth() starlark.Bool  { return true }
func (o objectValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", o.Type()) }
func (o objectValue) AttrNames() []string   { return o.obj.AttrNames() }

func (o objectValue) goValue() any {
	if s, ok := o.obj.(structObject); ok {
		return s.value()
	}
	return o.obj
}

func (o objectValue) Attr(name string) (starlark.Value, error) {
	v, ok := o.obj.Attr(name)
	if !ok {
		return nil, nil // starlark reports "has no .name field or method"
	}
	if m, ok := v.(Method); ok {
		return methodValue(o.Type()+"."+name, m), nil
	}
	if m, ok := v.(func([]any, map[string]any) (any, error)); ok {
		return methodValue(o.Type()+"."+name, m), nil
	}
	return toStarlark(v, nil)
}

// recordValue is a JSON object from a tool's return: a dict whose keys
// are also attributes (slot.starts_at as well as slot["starts_at"]).
type recordValue struct{ *starlark.Dict }

func (r recordValue) Attr(name string) (starlark.Value, error) {
	if v, found, _ := r.Dict.Get(starlark.String(name)); found {
		return v, nil
	}
	return r.Dict.Attr(name)
}

func (r recordValue) AttrNames() []string {
	var names []string
	for _, k := range r.Dict.Keys() {
		if s, ok := k.(starlark.String); ok {
			names = append(names, string(s))
		}
	}
	return append(names, r.Dict.AttrNames()...)
}

// methodValue is a Go method as a Starlark function.
func methodValue(name string, m Method) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		gargs := make([]any, len(args))
		for i, a := range args {
			v, err := toGo(a, true)
			if err != nil {
				return nil, fmt.Errorf("%s: argument %d: %w", name, i+1, err)
			}
			gargs[i] = v
		}
		gkw := make(map[string]any, len(kwargs))
		for _, kv := range kwargs {
			v, err := toGo(kv[1], true)
			if err != nil {
				return nil, fmt.Errorf("%s: argument %s: %w", name, kv[0], err)
			}
			gkw[string(kv[0].(starlark.String))] = v
		}
		out, err := m(gargs, gkw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return toStarlark(out, nil)
	})
}

// toStarlark converts a Go value. objects names the registered objects,
// so that a registered one keeps its name.
func toStarlark(v any, objects map[string]any) (starlark.Value, error) {
	return toStarlarkDepth(v, objects, 0)
}

func toStarlarkDepth(v any, objects map[string]any, depth int) (starlark.Value, error) {
	if depth > 32 {
		return nil, errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case starlark.Value:
		return x, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case int32:
		return starlark.MakeInt64(int64(x)), nil
	case uint64:
		return starlark.MakeUint64(x), nil
	case float64:
		return starlark.Float(x), nil
	case float32:
		return starlark.Float(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return starlark.MakeInt64(i), nil
		}
		if bi, ok := new(big.Int).SetString(string(x), 10); ok {
			return starlark.MakeBigInt(bi), nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return starlark.Float(f), nil
	case time.Time:
		return starlark.String(x.Format(time.RFC3339Nano)), nil
	case toolsets.Date:
		return starlark.String(x.String()), nil
	case toolsets.TimeOfDay:
		return starlark.String(x.String()), nil
	case json.RawMessage:
		d, err := decodeNumber(x)
		if err != nil {
			return nil, err
		}
		return toStarlarkDepth(d, objects, depth+1)
	case Method:
		return methodValue("method", x), nil
	case Object:
		for name, o := range objects {
			if o == v {
				return objectValue{obj: x, name: name}, nil
			}
		}
		return objectValue{obj: x}, nil
	case []any:
		l := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := toStarlarkDepth(e, objects, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = sv
		}
		return starlark.NewList(l), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sv, err := toStarlarkDepth(x[k], objects, depth+1)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(starlark.String(k), sv)
		}
		return recordValue{d}, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return starlark.None, nil
		}
		if rv.Elem().Kind() == reflect.Struct {
			return toStarlarkDepth(Struct(v), objects, depth+1)
		}
		return toStarlarkDepth(rv.Elem().Interface(), objects, depth+1)
	case reflect.Struct:
		return toStarlarkDepth(Struct(v), objects, depth+1)
	case reflect.Slice, reflect.Array:
		l := make([]starlark.Value, rv.Len())
		for i := range rv.Len() {
			sv, err := toStarlarkDepth(rv.Index(i).Interface(), objects, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = sv
		}
		return starlark.NewList(l), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("a map with %s keys has no program value", rv.Type().Key())
		}
		m := make(map[string]any, rv.Len())
		for _, k := range rv.MapKeys() {
			m[k.String()] = rv.MapIndex(k).Interface()
		}
		return toStarlarkDepth(m, objects, depth+1)
	case reflect.String:
		return starlark.String(rv.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return starlark.MakeInt64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return starlark.MakeUint64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return starlark.Float(rv.Float()), nil
	case reflect.Bool:
		return starlark.Bool(rv.Bool()), nil
	}
	return nil, fmt.Errorf("a Go %T has no program value", v)
}

// toGo converts a program value into a JSON-encodable Go value. live keeps
// objects as they are (for methods of host objects); otherwise a
// registered object becomes its name (which binds it again, see
// toolsets.ConvertArguments), a struct its fields, and an unregistered
// object is an error.
func toGo(v starlark.Value, live bool) (any, error) {
	return toGoDepth(v, live, 0)
}

func toGoDepth(v starlark.Value, live bool, depth int) (any, error) {
	if depth > 32 {
		return nil, errors.New("value nested too deeply")
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		return json.Number(x.String()), nil
	case starlark.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", f)
		}
		return f, nil
	case starlark.String:
		return string(x), nil
	case *starlark.List:
		return seqToGo(x, live, depth)
	case starlark.Tuple:
		return seqToGo(x, live, depth)
	case recordValue:
		return toGoDepth(x.Dict, live, depth)
	case *starlark.Dict:
		m := make(map[string]any, x.Len())
		for _, kv := range x.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("a dict with a %s key is not JSON", kv[0].Type())
			}
			gv, err := toGoDepth(kv[1], live, depth+1)
			if err != nil {
				return nil, err
			}
			m[string(k)] = gv
		}
		return m, nil
	case objectValue:
		switch {
		case live:
			return x.goValue(), nil
		case x.name != "":
			return x.name, nil
		}
		if s, ok := x.obj.(structObject); ok {
			return s.value(), nil
		}
		return nil, fmt.Errorf("the %s object is not registered with the job, so it cannot be passed on or kept", x.Type())
	}
	return nil, fmt.Errorf("a %s cannot be passed on or kept", v.Type())
}

func seqToGo(seq starlark.Indexable, live bool, depth int) (any, error) {
	out := make([]any, seq.Len())
	for i := range seq.Len() {
		gv, err := toGoDepth(seq.Index(i), live, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = gv
	}
	return out, nil
}

// decodeNumber decodes JSON raw, its numbers as json.Number.
func decodeNumber(raw json.RawMessage) (any, error) {
	var d any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(&d)
	return d, err
}
