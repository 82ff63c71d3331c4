package toolsets

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Argument conversion: before a call's arguments are validated, the
// registry turns model-friendly values into the ones the parameters
// schema asks for, in the seed's order, for formal calls and calls from
// code alike (it reads nothing but the schema):
//
//  1. a string where the property has an "enum" takes the declared
//     spelling of the name it matches without regard to case ("ERROR" →
//     "error");
//  2. an ISO date, date-time or time string where the property has format
//     "date", "date-time" or "time" is written in that format: date-only
//     and zone-less forms included (a zone-less time is UTC), a date-time
//     given for a date keeps its date;
//  3. in an "anyOf" union the first member (in declaration order) the
//     value fits is used;
//  4. a string where the property is not a string, naming a live variable
//     (a durable variable of the job, or a live host object of code mode),
//     binds to that value: a durable one replaces the string, a live
//     object is handed to the tool as the Go value ([NewFunc] sets the
//     field);
//  5. a property typed string keeps the literal: "user" stays "user".
//
// Anything else is left for validation to judge.

// Variables are the values a string argument may name: the job's durable
// variables (JSON) and live host objects.
type Variables struct {
	Durable map[string]json.RawMessage
	Live    func(name string) (any, bool)
}

// convertProp is the part of a parameters schema conversion reads.
type convertProp struct {
	Type       any                     `json:"type,omitempty"`
	Format     string                  `json:"format,omitempty"`
	Enum       []any                   `json:"enum,omitempty"`
	AnyOf      []*convertProp          `json:"anyOf,omitempty"`
	Properties map[string]*convertProp `json:"properties,omitempty"`
	Items      *convertProp            `json:"items,omitempty"`
}

// isString reports whether the schema admits only strings.
func (p *convertProp) isString() bool {
	switch t := p.Type.(type) {
	case string:
		return t == "string"
	case []any:
		return len(t) == 1 && t[0] == "string"
	}
	return false
}

func (p *convertProp) typeIs(name string) bool {
	switch t := p.Type.(type) {
	case string:
		return t == name
	case []any:
		return slices.Contains(t, any(name))
	}
	return p.Type == nil
}

// converter converts the arguments of one tool; nil when its schema has
// no properties.
type converter struct{ root *convertProp }

func newConverter(schema json.RawMessage) *converter {
	var p convertProp
	if json.Unmarshal(schema, &p) != nil || len(p.Properties) == 0 {
		return nil
	}
	return &converter{root: &p}
}

// ConvertArguments converts args for the parameters schema (see above).
// It returns the converted arguments (args itself when nothing changed)
// and the live objects bound to top-level parameters by name. It never
// fails: what it cannot convert is left as it was.
func ConvertArguments(schema, args json.RawMessage, vars Variables) (json.RawMessage, map[string]any) {
	c := newConverter(schema)
	if c == nil {
		return args, nil
	}
	decoded, ia := decodeArguments(args)
	if ia != nil {
		return args, nil
	}
	out, live, changed := c.convert(decoded, vars)
	if !changed {
		return args, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return args, nil
	}
	return b, live
}

// needs reports whether decoded arguments may have something to convert:
// a string, object or array at a property that is not a plain string. It
// does not allocate, so calls with nothing to convert cost a map walk.
func (c *converter) needs(decoded any) bool {
	obj, ok := decoded.(map[string]any)
	if !ok {
		return false
	}
	for name, v := range obj {
		p := c.root.Properties[name]
		if p == nil {
			continue
		}
		switch v.(type) {
		case string:
			if !p.isString() || p.Format != "" || len(p.Enum) > 0 || len(p.AnyOf) > 0 {
				return true
			}
		case map[string]any, []any:
			return true
		}
	}
	return false
}

// convert converts decoded arguments; changed says whether anything did.
func (c *converter) convert(decoded any, vars Variables) (any, map[string]any, bool) {
	obj, ok := decoded.(map[string]any)
	if !ok {
		return decoded, nil, false
	}
	var out map[string]any
	var live map[string]any
	for name, val := range obj {
		p := c.root.Properties[name]
		if p == nil {
			continue
		}
		v, bound, changed := convertValue(p, val, vars, 0)
		if !changed {
			continue
		}
		if out == nil {
			out = maps.Clone(obj)
		}
		out[name] = v
		if bound != nil {
			if live == nil {
				live = map[string]any{}
			}
			live[name] = bound
		}
	}
	if out == nil {
		return decoded, nil, false
	}
	return out, live, true
}

// convertValue converts one value for schema p. bound is the live object
// a top-level string bound to (depth 0 only).
func convertValue(p *convertProp, v any, vars Variables, depth int) (out, bound any, changed bool) {
	if depth > 16 {
		return v, nil, false
	}
	if len(p.AnyOf) > 0 {
		for _, m := range p.AnyOf {
			cv, b, ch := convertValue(m, v, vars, depth)
			if fits(m, cv) {
				return cv, b, ch
			}
		}
		return v, nil, false
	}
	switch x := v.(type) {
	case string:
		if p.isString() || (p.Format != "" && p.typeIs("string")) {
			return convertString(p, x)
		}
		if p.typeIs("string") && p.Type != nil {
			return v, nil, false // a string among other types: the literal
		}
		return bindVariable(p, x, vars, depth)
	case map[string]any:
		if len(p.Properties) == 0 {
			return v, nil, false
		}
		var cp map[string]any
		for k, xv := range x {
			sp := p.Properties[k]
			if sp == nil {
				continue
			}
			if cv, _, ch := convertValue(sp, xv, vars, depth+1); ch {
				if cp == nil {
					cp = maps.Clone(x)
				}
				cp[k] = cv
			}
		}
		if cp == nil {
			return v, nil, false
		}
		return cp, nil, true
	case []any:
		if p.Items == nil {
			return v, nil, false
		}
		var cp []any
		for i, e := range x {
			if cv, _, ch := convertValue(p.Items, e, vars, depth+1); ch {
				if cp == nil {
					cp = slices.Clone(x)
				}
				cp[i] = cv
			}
		}
		if cp == nil {
			return v, nil, false
		}
		return cp, nil, true
	}
	return v, nil, false
}

// convertString applies the enum and date rules to a string property.
func convertString(p *convertProp, s string) (any, any, bool) {
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if es, ok := e.(string); ok && es != s && strings.EqualFold(es, s) {
				return es, nil, true
			}
		}
		return s, nil, false
	}
	var out string
	switch p.Format {
	case "date-time":
		t, ok := ParseISO(s)
		if !ok {
			return s, nil, false
		}
		out = t.Format(time.RFC3339Nano)
	case "date":
		t, ok := ParseISO(s)
		if !ok {
			return s, nil, false
		}
		out = t.Format(time.DateOnly)
	case "time":
		t, ok := parseTimeOfDay(s)
		if !ok {
			return s, nil, false
		}
		out = t.String()
	default:
		return s, nil, false
	}
	return out, nil, out != s
}

// bindVariable binds string s, given where p wants no string, to the
// variable it names.
func bindVariable(p *convertProp, s string, vars Variables, depth int) (any, any, bool) {
	if raw, ok := vars.Durable[s]; ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return v, nil, true
		}
	}
	if vars.Live == nil || depth > 0 {
		return s, nil, false
	}
	obj, ok := vars.Live(s)
	if !ok {
		return s, nil, false
	}
	// The live object is handed over as itself; the arguments carry an
	// empty object in its place, which the schema of a host object's
	// type (no exported fields) accepts.
	if p.typeIs("object") {
		return map[string]any{}, obj, true
	}
	return s, nil, false
}

// fits reports whether v has a type schema p admits (and, for a format,
// parses as it).
func fits(p *convertProp, v any) bool {
	switch x := v.(type) {
	case string:
		if !p.typeIs("string") {
			return false
		}
		switch p.Format {
		case "date-time", "date":
			_, ok := ParseISO(x)
			return ok
		case "time":
			_, ok := parseTimeOfDay(x)
			return ok
		}
		if len(p.Enum) > 0 {
			return slices.Contains(p.Enum, any(x))
		}
		return true
	case bool:
		return p.typeIs("boolean")
	case float64, json.Number:
		return p.typeIs("number") || p.typeIs("integer")
	case map[string]any:
		return p.typeIs("object")
	case []any:
		return p.typeIs("array")
	case nil:
		return p.typeIs("null")
	}
	return false
}

var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	time.DateOnly,
}

// ParseISO parses an ISO 8601 date or date-time: with or without a zone
// (zone-less is UTC), with or without seconds, or a date alone (midnight
// UTC).
func ParseISO(s string) (time.Time, bool) {
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, false
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseTimeOfDay(s string) (TimeOfDay, bool) {
	if len(s) > 32 {
		return TimeOfDay{}, false
	}
	for _, l := range []string{"15:04:05.999999999Z07:00", "15:04:05.999999999", "15:04Z07:00", "15:04"} {
		if t, err := time.Parse(l, s); err == nil {
			return TimeOfDay{t.Hour(), t.Minute(), t.Second()}, true
		}
	}
	if t, ok := ParseISO(s); ok && len(s) > 10 {
		return TimeOfDay{t.Hour(), t.Minute(), t.Second()}, true
	}
	return TimeOfDay{}, false
}

// setFields sets the struct fields of *dst named (by JSON name) in vals:
// the live objects bound to decoded arguments. A value the field cannot
// hold is an error naming the parameter.
func setFields(dst any, vals map[string]any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	rv = rv.Elem()
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		v, ok := vals[JSONName(f)]
		if !ok {
			continue
		}
		val := reflect.ValueOf(v)
		switch {
		case val.IsValid() && val.Type().AssignableTo(f.Type):
			rv.Field(i).Set(val)
		case val.IsValid() && val.Kind() == reflect.Pointer && val.Elem().Type().AssignableTo(f.Type):
			rv.Field(i).Set(val.Elem())
		default:
			return fmt.Errorf("the variable given for %q is a %T; the parameter wants a %v", JSONName(f), v, f.Type)
		}
	}
	return nil
}
