package codemode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/weft-run/weft/toolsets"
)

// Render limits: collections show their first RenderItems elements and
// then how many more there are; strings their first RenderChars
// characters; nesting past RenderDepth shows as "…".
const (
	RenderItems = 20
	RenderChars = 500
	RenderDepth = 5
)

// Render shows v to the model compactly and deterministically, in the
// program's own notation: None, True/False, numbers, quoted strings,
// [lists] and {dicts} (keys sorted), structs by field as
// Type(field=value, …) in field order, objects by their Repr(), times in
// RFC 3339. Long collections and strings are cut, with a count of what was
// left out.
func Render(v any) string {
	var b strings.Builder
	render(&b, v, 0)
	return b.String()
}

func render(b *strings.Builder, v any, depth int) {
	if depth > RenderDepth {
		b.WriteString("…")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
		return
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
		return
	case string:
		renderString(b, x)
		return
	case json.Number:
		b.WriteString(string(x))
		return
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		return
	case time.Time:
		b.WriteString(x.Format(time.RFC3339Nano))
		return
	case toolsets.Date:
		b.WriteString(x.String())
		return
	case toolsets.TimeOfDay:
		b.WriteString(x.String())
		return
	case json.RawMessage:
		d, err := decodeNumber(x)
		if err != nil {
			renderString(b, string(x))
			return
		}
		render(b, d, depth)
		return
	case objectValue:
		render(b, x.goValue(), depth)
		return
	case starlark.Value:
		if g, err := toGo(x, true); err == nil {
			render(b, g, depth)
		} else {
			b.WriteString(x.String())
		}
		return
	case structObject:
		render(b, x.value(), depth)
		return
	case Object:
		b.WriteString(x.Repr())
		return
	case interface{ Repr() string }:
		b.WriteString(x.Repr())
		return
	case []any:
		renderList(b, len(x), func(i int) any { return x[i] }, depth)
		return
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		renderMap(b, keys, func(k string) any { return x[k] }, depth)
		return
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			b.WriteString("None")
			return
		}
		render(b, rv.Elem().Interface(), depth)
	case reflect.Struct:
		renderStruct(b, rv, depth)
	case reflect.Slice, reflect.Array:
		renderList(b, rv.Len(), func(i int) any { return rv.Index(i).Interface() }, depth)
	case reflect.Map:
		keys := make([]string, 0, rv.Len())
		byKey := map[string]reflect.Value{}
		for _, k := range rv.MapKeys() {
			ks := fmt.Sprint(k.Interface())
			keys = append(keys, ks)
			byKey[ks] = rv.MapIndex(k)
		}
		sort.Strings(keys)
		renderMap(b, keys, func(k string) any { return byKey[k].Interface() }, depth)
	case reflect.String:
		renderString(b, rv.String())
	default:
		fmt.Fprint(b, v)
	}
}

func renderString(b *strings.Builder, s string) {
	if n := len([]rune(s)); n > RenderChars {
		b.WriteString(strconv.Quote(string([]rune(s)[:RenderChars])))
		fmt.Fprintf(b, "…(%d more chars)", n-RenderChars)
		return
	}
	b.WriteString(strconv.Quote(s))
}

func renderList(b *strings.Builder, n int, at func(int) any, depth int) {
	b.WriteByte('[')
	for i := range min(n, RenderItems) {
		if i > 0 {
			b.WriteString(", ")
		}
		render(b, at(i), depth+1)
	}
	if n > RenderItems {
		fmt.Fprintf(b, ", … (%d more)", n-RenderItems)
	}
	b.WriteByte(']')
}

func renderMap(b *strings.Builder, keys []string, at func(string) any, depth int) {
	b.WriteByte('{')
	for i, k := range keys {
		if i == RenderItems {
			fmt.Fprintf(b, ", … (%d more)", len(keys)-RenderItems)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		renderString(b, k)
		b.WriteString(": ")
		render(b, at(k), depth+1)
	}
	b.WriteByte('}')
}

func renderStruct(b *strings.Builder, rv reflect.Value, depth int) {
	t := rv.Type()
	b.WriteString(t.Name())
	b.WriteByte('(')
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		name := toolsets.JSONName(f)
		if !f.IsExported() || name == "" {
			continue
		}
		if n == RenderItems {
			b.WriteString(", …")
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		b.WriteString(name)
		b.WriteByte('=')
		render(b, rv.Field(i).Interface(), depth+1)
	}
	b.WriteByte(')')
}
