package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// StrictSchema converts a tool's JSON Schema to the dialect OpenAI's strict
// mode accepts (see the package doc, "Strict mode"), or says with a
// *SchemaError why it cannot. It is what Request does for every tool
// whose Strict is set; it lets a program check its tools beforehand.
func StrictSchema(schema json.RawMessage) (json.RawMessage, error) {
	s, _, err := strictSchema("", schema)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// dropped are keywords strict mode refuses that only narrow what is valid:
// they are left out of what the provider sees. The runtime still
// validates every call's arguments against the tool's full schema.
var dropped = map[string]bool{
	"default": true, "examples": true, "$schema": true, "$id": true, "$comment": true,
	"minLength": true, "maxLength": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
	"contains": true, "minContains": true, "maxContains": true,
	"readOnly": true, "writeOnly": true, "deprecated": true,
	"contentEncoding": true, "contentMediaType": true,
}

// refused are keywords strict mode cannot express without accepting
// arguments the schema refuses or refusing ones it accepts differently.
var refused = map[string]string{
	"not":                   "negation (not)",
	"if":                    "conditionals (if/then/else)",
	"then":                  "conditionals (if/then/else)",
	"else":                  "conditionals (if/then/else)",
	"dependentRequired":     "dependentRequired",
	"dependentSchemas":      "dependentSchemas",
	"patternProperties":     "patternProperties",
	"unevaluatedProperties": "unevaluatedProperties",
	"unevaluatedItems":      "unevaluatedItems",
	"propertyNames":         "propertyNames",
	"prefixItems":           "tuples (prefixItems)",
}

// strictFormats are the string formats strict mode accepts; others are
// dropped.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

// nulls records where the conversion made an optional property nullable,
// so that a null the model sends there can be taken out of its arguments
// (the tool's own schema would refuse it).
type nulls struct {
	drop  map[string]bool   // optional properties made nullable
	props map[string]*nulls // nested objects, by property
	items *nulls            // the schema of array items
	ref   string            // a $ref to follow, "#/$defs/Name"
	defs  map[string]*nulls // the root's $defs and definitions, by ref
}

func (n *nulls) empty() bool {
	return n == nil || (len(n.drop) == 0 && len(n.props) == 0 && n.items == nil && n.ref == "" && len(n.defs) == 0)
}

// strictSchema decodes and converts a tool's schema. An empty schema is an
// object without properties.
func strictSchema(tool string, raw json.RawMessage) (map[string]any, *nulls, error) {
	root, err := decodeSchema(raw)
	if err != nil {
		return nil, nil, &SchemaError{Tool: tool, Pointer: "", Reason: err.Error()}
	}
	c := converter{tool: tool}
	if !isObject(root) {
		return nil, nil, c.fail("", "the root must be an object schema")
	}
	out, n, err := c.schema(root, "")
	if err != nil {
		return nil, nil, err
	}
	return out, n, nil
}

// decodeSchema decodes a tool's parameter schema; nil or empty is an
// object schema without properties.
func decodeSchema(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var root map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if root == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return root, nil
}

type converter struct{ tool string }

func (c converter) fail(ptr, reason string) error {
	return &SchemaError{Tool: c.tool, Pointer: ptr, Reason: reason}
}

// schema converts one schema node found at ptr.
func (c converter) schema(in map[string]any, ptr string) (map[string]any, *nulls, error) {
	if len(in) == 0 {
		return nil, nil, c.fail(ptr, "an empty schema accepts any value; strict mode needs a type")
	}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if what, ok := refused[k]; ok {
			return nil, nil, c.fail(ptr, what+" is not supported")
		}
	}
	if all, ok := in["allOf"].([]any); ok {
		if len(all) != 1 {
			return nil, nil, c.fail(ptr, "allOf of more than one schema is not supported")
		}
		sub, ok := all[0].(map[string]any)
		if !ok {
			return nil, nil, c.fail(ptr+"/allOf/0", "not a schema object")
		}
		merged := maps.Clone(in)
		delete(merged, "allOf")
		for k, v := range sub {
			if _, dup := merged[k]; dup {
				return nil, nil, c.fail(ptr, fmt.Sprintf("allOf repeats %q", k))
			}
			merged[k] = v
		}
		return c.schema(merged, ptr)
	}
	out := make(map[string]any, len(in)+2)
	n := &nulls{}
	for k, v := range in {
		switch {
		case dropped[k]:
			continue
		case k == "format":
			if f, _ := v.(string); strictFormats[f] {
				out[k] = v
			}
			continue
		case k == "properties", k == "required", k == "additionalProperties", k == "items",
			k == "anyOf", k == "oneOf", k == "$defs", k == "definitions", k == "$ref":
			continue // below
		}
		out[k] = v
	}
	if ref, ok := in["$ref"].(string); ok {
		if !strings.HasPrefix(ref, "#/$defs/") && !strings.HasPrefix(ref, "#/definitions/") {
			return nil, nil, c.fail(ptr, fmt.Sprintf("$ref %q is not a local definition", ref))
		}
		out["$ref"] = ref
		n.ref = ref
		for k := range out { // strict mode allows no siblings of $ref but a description
			if k != "$ref" && k != "description" {
				delete(out, k)
			}
		}
	}
	for _, defsKey := range []string{"$defs", "definitions"} {
		defs, ok := in[defsKey].(map[string]any)
		if !ok {
			continue
		}
		conv := make(map[string]any, len(defs))
		for name, d := range defs {
			dm, ok := d.(map[string]any)
			if !ok {
				return nil, nil, c.fail(ptr+"/"+defsKey+"/"+name, "not a schema object")
			}
			s, dn, err := c.schema(dm, ptr+"/"+defsKey+"/"+name)
			if err != nil {
				return nil, nil, err
			}
			conv[name] = s
			if !dn.empty() {
				if n.defs == nil {
					n.defs = map[string]*nulls{}
				}
				n.defs["#/"+defsKey+"/"+name] = dn
			}
		}
		out[defsKey] = conv
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, ok := in[key].([]any)
		if !ok {
			continue
		}
		conv := make([]any, len(alts))
		for i, a := range alts {
			am, ok := a.(map[string]any)
			if !ok {
				return nil, nil, c.fail(fmt.Sprintf("%s/%s/%d", ptr, key, i), "not a schema object")
			}
			s, _, err := c.schema(am, fmt.Sprintf("%s/%s/%d", ptr, key, i))
			if err != nil {
				return nil, nil, err
			}
			conv[i] = s
		}
		// oneOf becomes anyOf, which strict mode accepts: a little looser,
		// and the runtime still validates against the tool's schema.
		out["anyOf"] = append(asSlice(out["anyOf"]), conv...)
	}
	if items, ok := in["items"]; ok {
		im, ok := items.(map[string]any)
		if !ok {
			return nil, nil, c.fail(ptr+"/items", "items must be one schema")
		}
		s, itn, err := c.schema(im, ptr+"/items")
		if err != nil {
			return nil, nil, err
		}
		out["items"] = s
		if !itn.empty() {
			n.items = itn
		}
	}
	if isObject(in) {
		if err := c.object(in, ptr, out, n); err != nil {
			return nil, nil, err
		}
	}
	if _, hasRef := out["$ref"]; !hasRef && out["type"] == nil && out["anyOf"] == nil && out["enum"] == nil && out["const"] == nil {
		return nil, nil, c.fail(ptr, "a schema without a type accepts any value; strict mode needs a type")
	}
	return out, n, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func isObject(s map[string]any) bool {
	if _, ok := s["properties"]; ok {
		return true
	}
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// object converts an object schema's properties into out: every property
// required, the optional ones nullable, additionalProperties false.
func (c converter) object(in map[string]any, ptr string, out map[string]any, n *nulls) error {
	switch ap := in["additionalProperties"].(type) {
	case nil:
	case bool:
		if ap {
			return c.fail(ptr, "an object open to additional properties is not supported")
		}
	default:
		return c.fail(ptr, "additionalProperties as a schema (a map) is not supported")
	}
	props, _ := in["properties"].(map[string]any)
	if _, ok := in["properties"]; ok && props == nil {
		return c.fail(ptr+"/properties", "not an object")
	}
	required := map[string]bool{}
	for _, r := range asSlice(in["required"]) {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	conv := make(map[string]any, len(props))
	names := slices.Sorted(maps.Keys(props))
	for _, name := range names {
		pm, ok := props[name].(map[string]any)
		pptr := ptr + "/properties/" + escapePointer(name)
		if !ok {
			return c.fail(pptr, "not a schema object")
		}
		s, pn, err := c.schema(pm, pptr)
		if err != nil {
			return err
		}
		if !required[name] {
			var added bool
			s, added = nullable(s)
			if added {
				if n.drop == nil {
					n.drop = map[string]bool{}
				}
				n.drop[name] = true
			}
		}
		conv[name] = s
		if !pn.empty() {
			if n.props == nil {
				n.props = map[string]*nulls{}
			}
			n.props[name] = pn
		}
	}
	out["properties"] = conv
	req := make([]any, len(names))
	for i, name := range names {
		req[i] = name
	}
	out["required"] = req
	out["additionalProperties"] = false
	if out["type"] == nil {
		out["type"] = "object"
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// nullable returns s accepting null too, and whether null was added (false
// when s accepted null already).
func nullable(s map[string]any) (map[string]any, bool) {
	if _, ok := s["$ref"]; !ok {
		switch t := s["type"].(type) {
		case string:
			if t == "null" {
				return s, false
			}
			if _, hasConst := s["const"]; !hasConst {
				s["type"] = []any{t, "null"}
				if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
					s["enum"] = append(enum, nil)
				}
				return s, true
			}
		case []any:
			if slices.Contains(t, any("null")) {
				return s, false
			}
			if _, hasConst := s["const"]; !hasConst {
				s["type"] = append(t, "null")
				if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
					s["enum"] = append(enum, nil)
				}
				return s, true
			}
		}
		if alts, ok := s["anyOf"].([]any); ok && len(s) == 1 {
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok && am["type"] == "null" {
					return s, false
				}
			}
			s["anyOf"] = append(alts, map[string]any{"type": "null"})
			return s, true
		}
	}
	out := map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	if d, ok := s["description"]; ok {
		out["description"] = d
		delete(s, "description")
	}
	return out, true
}

// stripNulls removes from args, the JSON arguments of a call, the nulls
// the model sent for optional properties the conversion made nullable. It
// returns args unchanged when there are none (or args are not JSON).
func stripNulls(args json.RawMessage, n *nulls) json.RawMessage {
	if n.empty() || len(args) == 0 {
		return args
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return args
	}
	if !strip(v, n, n.defs, 0) {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return b
}

// strip removes dropped nulls from v in place and reports whether it did.
func strip(v any, n *nulls, defs map[string]*nulls, depth int) bool {
	if n == nil || depth > 64 {
		return false
	}
	if n.ref != "" {
		return strip(v, defs[n.ref], defs, depth+1)
	}
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if val == nil && n.drop[k] {
				delete(v, k)
				changed = true
				continue
			}
			if strip(val, n.props[k], defs, depth+1) {
				changed = true
			}
		}
	case []any:
		for _, e := range v {
			if strip(e, n.items, defs, depth+1) {
				changed = true
			}
		}
	}
	return changed
}
