package agentspec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder decodes a YAML node into the spec types strictly: every field
// is known, every value has the field's type, no key appears twice. Each
// error names the node's line and the field's path. It records the line
// of every field it decodes, for the errors found later.
type decoder struct {
	file  string
	lines map[string]int
}

var durationType = reflect.TypeFor[Duration]()

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) *Error {
	return &Error{File: d.file, Line: n.Line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// decode decodes n into v (settable) at path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		return d.errorf(n, path, "aliases are not supported")
	}
	d.lines[path] = n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && v.Kind() != reflect.Interface {
		return d.errorf(n, path, "null is not a valid value")
	}
	switch {
	case v.Type() == durationType:
		return d.duration(n, v, path)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case v.Kind() == reflect.Struct:
		return d.object(n, v, path)
	case v.Kind() == reflect.Slice:
		return d.list(n, v, path)
	case v.Kind() == reflect.Map:
		return d.dict(n, v, path)
	case v.Kind() == reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			return d.errorf(n, path, "%s", yamlMsg(err))
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return nil
	}
	return d.scalar(n, v, path)
}

func (d *decoder) object(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "want a mapping, got %s", kindOf(n))
	}
	fields := map[string]int{}
	var known []string
	for i := range v.NumField() {
		if tag := yamlName(v.Type().Field(i)); tag != "" {
			fields[tag] = i
			known = append(known, tag)
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		fp := join(path, k.Value)
		idx, ok := fields[k.Value]
		if !ok {
			return &Error{File: d.file, Line: k.Line, Field: fp, Msg: "unknown field (known: " + strings.Join(known, ", ") + ")"}
		}
		if seen[k.Value] {
			return &Error{File: d.file, Line: k.Line, Field: fp, Msg: "duplicate field"}
		}
		seen[k.Value] = true
		if err := d.decode(val, v.Field(idx), fp); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, path, "want a list, got %s", kindOf(n))
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		if err := d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "want a mapping, got %s", kindOf(n))
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		fp := join(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			return d.errorf(k, fp, "a key is a string")
		}
		if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			return &Error{File: d.file, Line: k.Line, Field: fp, Msg: "duplicate key"}
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, e, fp); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(k.Value), e)
	}
	v.Set(m)
	return nil
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return d.errorf(n, path, "want %s, got %s", scalarKind(v.Kind()), kindOf(n))
	}
	want := map[reflect.Kind]string{reflect.String: "!!str", reflect.Bool: "!!bool", reflect.Int: "!!int", reflect.Int64: "!!int", reflect.Float64: "!!float"}[v.Kind()]
	if want == "" {
		return d.errorf(n, path, "unsupported field type %s", v.Type())
	}
	if n.Tag != want && (want != "!!float" || n.Tag != "!!int") {
		return d.errorf(n, path, "want %s, got %s", scalarKind(v.Kind()), kindOf(n))
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		return d.errorf(n, path, "%s", yamlMsg(err))
	}
	return nil
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return d.errorf(n, path, "want a duration such as \"30s\", got %s", kindOf(n))
	}
	t, err := time.ParseDuration(n.Value)
	if err != nil || t < 0 {
		return d.errorf(n, path, "want a duration such as \"30s\" (a number and a unit: ms, s, m, h)")
	}
	v.SetInt(int64(t))
	return nil
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return n.Tag
}

func scalarKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return k.String()
}

// yamlMsg is a yaml error's text without its own "yaml: line N:" prefix.
func yamlMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "unmarshal errors:\n  "); ok {
		s = rest
	}
	if strings.HasPrefix(s, "line ") {
		if _, after, ok := strings.Cut(s, ": "); ok {
			if _, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(s, ":", 2)[0], "line ")); err == nil {
				s = after
			}
		}
	}
	return s
}
