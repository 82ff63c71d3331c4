package toolsets

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The schema inference knows what jsonschema-go cannot see in a Go type,
// so that the argument conversion ([ConvertArguments]) can rely on the
// schema alone, for typed tools and explicit schemas alike: time.Time is a
// string of format "date-time", [Date] of format "date", [TimeOfDay] of
// format "time", an [Enum] type or an `enum:"a,b"` tag gives "enum", and
// an [Either] is "anyOf" its members in order.

var (
	timeType      = reflect.TypeFor[time.Time]()
	dateType      = reflect.TypeFor[Date]()
	timeOfDayType = reflect.TypeFor[TimeOfDay]()
	enumType      = reflect.TypeFor[Enum]()
	unionType     = reflect.TypeFor[union]()
)

// annotate completes schema s, inferred by jsonschema-go for type t.
func annotate(t reflect.Type, s *jsonschema.Schema, depth int) error {
	if s == nil || depth > 8 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		s.Types, s.Type, s.Format = nil, "string", "date-time"
		return nil
	case t == dateType:
		*s = jsonschema.Schema{Type: "string", Format: "date", Description: s.Description}
		return nil
	case t == timeOfDayType:
		*s = jsonschema.Schema{Type: "string", Format: "time", Description: s.Description}
		return nil
	case t.Implements(unionType):
		u := reflect.Zero(t).Interface().(union)
		out := jsonschema.Schema{Description: s.Description}
		for _, m := range u.members() {
			ms, err := jsonschema.ForType(m, nil)
			if err != nil {
				return err
			}
			if err := annotate(m, ms, depth+1); err != nil {
				return err
			}
			out.AnyOf = append(out.AnyOf, ms)
		}
		*s = out
		return nil
	case t.Kind() == reflect.String && t.Implements(enumType):
		s.Enum = enumValues(reflect.Zero(t).Interface().(Enum).Enum())
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := JSONName(f)
			if name == "" {
				continue
			}
			p := s.Properties[name]
			if p == nil {
				continue
			}
			if err := annotate(f.Type, p, depth+1); err != nil {
				return err
			}
			if tag, ok := f.Tag.Lookup("enum"); ok && len(p.Enum) == 0 {
				p.Enum = enumValues(strings.Split(tag, ","))
			}
		}
	case reflect.Slice, reflect.Array:
		return annotate(t.Elem(), s.Items, depth+1)
	}
	return nil
}

func enumValues(names []string) []any {
	out := make([]any, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// JSONName is the JSON property name of struct field f: its json tag
// name, else the Go name ("" when the tag is "-").
func JSONName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name
}

// inferAnnotated is inferSchema with the annotations.
func inferAnnotated(t reflect.Type) (json.RawMessage, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return inferSchema(t)
	}
	s, err := jsonschema.ForType(base, nil)
	if err != nil {
		return inferSchema(t)
	}
	if err := annotate(base, s, 0); err != nil {
		return nil, &SchemaError{Rule: RuleInference, Detail: "cannot infer a schema for " + t.String(), Err: err}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, &SchemaError{Rule: RuleInference, Detail: "cannot encode the schema inferred for " + t.String(), Err: err}
	}
	return raw, nil
}
