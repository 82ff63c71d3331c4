package agentspec_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/weft-run/weft/agentspec"
)

// The committed schema and the Go types say the same: every struct of the
// format is a $defs entry named after it (MCPTool: mcp_tool) whose
// properties are exactly the struct's fields, each of the field's JSON
// type, required exactly when the field is not optional (omitempty or
// omitzero); and every $defs entry is used.
func TestSchemaMatchesTypes(t *testing.T) {
	var root jsonschema.Schema
	if err := json.Unmarshal(agentspec.Schema, &root); err != nil {
		t.Fatal(err)
	}
	if root.Schema != "https://json-schema.org/draft/2020-12/schema" || root.Ref != "#/$defs/file" {
		t.Fatalf("the schema's $schema %q and $ref %q: want draft 2020-12 and #/$defs/file", root.Schema, root.Ref)
	}
	c := &schemaCheck{t: t, root: &root, used: map[string]bool{}}
	c.structDef(reflect.TypeFor[agentspec.File]())
	for name := range root.Defs {
		if !c.used[name] {
			t.Errorf("$defs/%s is used by no field", name)
		}
	}
}

type schemaCheck struct {
	t    *testing.T
	root *jsonschema.Schema
	used map[string]bool
}

// def follows a $ref to its $defs entry, marking it used.
func (c *schemaCheck) def(s *jsonschema.Schema) *jsonschema.Schema {
	for s != nil && s.Ref != "" {
		name, _ := strings.CutPrefix(s.Ref, "#/$defs/")
		c.used[name] = true
		s = c.root.Defs[name]
	}
	return s
}

func (c *schemaCheck) structDef(typ reflect.Type) {
	name := snake(typ.Name())
	if c.used[name] {
		return
	}
	c.used[name] = true
	s := c.root.Defs[name]
	if s == nil {
		c.t.Errorf("%s: no $defs/%s", typ, name)
		return
	}
	if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		c.t.Errorf("$defs/%s allows unknown properties", name)
	}
	var fields, required []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		yname, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		jname, jopts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if yname != jname {
			c.t.Errorf("%s.%s: yaml name %q, json name %q", typ, f.Name, yname, jname)
		}
		fields = append(fields, yname)
		if !strings.Contains(jopts, "omitempty") && !strings.Contains(jopts, "omitzero") {
			required = append(required, yname)
		}
		prop := s.Properties[yname]
		if prop == nil {
			c.t.Errorf("%s.%s: no property %q in $defs/%s", typ, f.Name, yname, name)
			continue
		}
		c.value(typ.Name()+"."+f.Name, f.Type, prop)
	}
	props := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
	slices.Sort(fields)
	if d := cmp.Diff(fields, props); d != "" {
		c.t.Errorf("$defs/%s properties (+) vs %s fields (-):\n%s", name, typ, d)
	}
	slices.Sort(required)
	want := slices.Sorted(slices.Values(s.Required))
	if d := cmp.Diff(required, want); d != "" {
		c.t.Errorf("$defs/%s required (+) vs %s's non-optional fields (-):\n%s", name, typ, d)
	}
}

// value checks that the schema s of a field has the field's type.
func (c *schemaCheck) value(where string, typ reflect.Type, s *jsonschema.Schema) {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() == reflect.Struct {
		if want := "#/$defs/" + snake(typ.Name()); s.Ref != want {
			c.t.Errorf("%s: $ref %q, want %q", where, s.Ref, want)
		}
		c.structDef(typ)
		return
	}
	s = c.def(s)
	got := s.Type
	if got == "" && s.Const != nil {
		got = jsonKind(reflect.TypeOf(*s.Const))
	}
	if got == "" && len(s.Enum) > 0 {
		got = jsonKind(reflect.TypeOf(s.Enum[0]))
	}
	want := jsonKind(typ)
	if typ == reflect.TypeFor[agentspec.Duration]() {
		want = "string"
	}
	if got != want {
		c.t.Errorf("%s: schema type %q, Go %s wants %q", where, got, typ, want)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		if s.Items == nil {
			c.t.Errorf("%s: a list without items", where)
			return
		}
		c.value(where+"[]", typ.Elem(), s.Items)
	case reflect.Map:
		if typ.Elem().Kind() == reflect.Interface {
			return // free-form (MCP tool parameters)
		}
		if s.AdditionalProperties == nil {
			c.t.Errorf("%s: a mapping without additionalProperties", where)
			return
		}
		c.value(where+"{}", typ.Elem(), s.AdditionalProperties)
	}
}

func jsonKind(typ reflect.Type) string {
	switch typ.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		if typ == reflect.TypeFor[float64]() {
			return "number"
		}
	case reflect.Slice:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return typ.String()
}

// snake is a Go type name as a $defs name: MCPTool -> mcp_tool.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
