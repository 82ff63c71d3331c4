package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// strictKeywords are the JSON Schema keywords the API's strict mode
// (grammar-constrained tool input) accepts. The API also limits minItems
// to 0 or 1 and format to strictFormats.
var strictKeywords = map[string]bool{
	"$ref": true, "$defs": true, "definitions": true, "type": true,
	"anyOf": true, "allOf": true, "oneOf": true, "description": true, "title": true,
	"enum": true, "const": true, "properties": true, "additionalProperties": true,
	"required": true, "items": true, "minItems": true, "format": true, "pattern": true,
}

var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// metaKeywords say what a schema is, not what it accepts; strictSchema
// drops them.
var metaKeywords = []string{"$schema", "$id", "$comment"}

// strictSchema converts a tool's parameters schema to one the API's strict
// mode accepts, as the Anthropic SDKs do for their own schema helpers:
//
//   - every object schema gets "additionalProperties": false (and
//     "properties": {} when it has none);
//   - "oneOf" becomes "anyOf";
//   - keywords strict mode does not take (minimum, maximum, multipleOf,
//     minLength, maxLength, maxItems, minItems other than 0 or 1, a
//     format outside strictFormats, …) are removed from the schema and
//     appended to its description as {keyword: value, …}, so the model
//     still reads them; the runtime still validates the arguments against
//     the tool's original schema;
//   - $schema, $id and $comment are dropped.
//
// What cannot be converted fails with ErrStrictSchema naming the place: an
// object whose additionalProperties is true or a schema (strict mode
// allows only false), a tuple "items" list, "oneOf" beside "anyOf", a
// recursive schema (a $ref to "#" or a cycle through $defs), or a
// schema that is not a JSON object.
func strictSchema(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStrictSchema, err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the schema is not a JSON object", ErrStrictSchema)
	}
	for _, k := range metaKeywords {
		delete(root, k)
	}
	if err := checkRecursion(root); err != nil {
		return nil, err
	}
	if err := strictNode(root, "#"); err != nil {
		return nil, err
	}
	return json.Marshal(root)
}

func strictNode(n map[string]any, at string) error {
	moved := map[string]any{}
	for k, v := range n {
		if !strictKeywords[k] {
			moved[k] = v
			delete(n, k)
		}
	}
	if mi, ok := n["minItems"].(json.Number); ok && mi.String() != "0" && mi.String() != "1" {
		moved["minItems"] = mi
		delete(n, "minItems")
	}
	if f, ok := n["format"].(string); ok && !slices.Contains(strictFormats, f) {
		moved["format"] = f
		delete(n, "format")
	}
	if one, ok := n["oneOf"]; ok {
		if _, both := n["anyOf"]; both {
			return fmt.Errorf("%w: %s: oneOf beside anyOf", ErrStrictSchema, at)
		}
		n["anyOf"] = one
		delete(n, "oneOf")
	}
	if isObject(n) {
		if ap, ok := n["additionalProperties"]; ok && ap != false {
			return fmt.Errorf("%w: %s: additionalProperties must be false in strict mode", ErrStrictSchema, at)
		}
		n["additionalProperties"] = false
		if _, ok := n["properties"]; !ok {
			n["properties"] = map[string]any{}
		}
	}
	if len(moved) > 0 {
		desc, _ := n["description"].(string)
		if desc != "" {
			desc += "\n\n"
		}
		n["description"] = desc + describe(moved)
	}
	if items, ok := n["items"]; ok {
		if _, tuple := items.([]any); tuple {
			return fmt.Errorf("%w: %s/items: a tuple (items as a list) has no strict form", ErrStrictSchema, at)
		}
	}
	return forChildren(n, at, strictNode)
}

// forChildren calls f on every subschema of n: properties, items, anyOf
// and allOf entries, $defs and definitions.
func forChildren(n map[string]any, at string, f func(map[string]any, string) error) error {
	for _, key := range []string{"properties", "$defs", "definitions"} {
		m, _ := n[key].(map[string]any)
		for _, name := range sortedKeys(m) {
			if c, ok := m[name].(map[string]any); ok {
				if err := f(c, at+"/"+key+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	if c, ok := n["items"].(map[string]any); ok {
		if err := f(c, at+"/items"); err != nil {
			return err
		}
	}
	for _, key := range []string{"anyOf", "allOf", "oneOf"} {
		l, _ := n[key].([]any)
		for i, e := range l {
			if c, ok := e.(map[string]any); ok {
				if err := f(c, fmt.Sprintf("%s/%s/%d", at, key, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isObject(n map[string]any) bool {
	switch t := n["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, props := n["properties"]
	return props
}

// describe renders moved keywords as {keyword: value, …}, keywords sorted,
// values as compact JSON.
func describe(moved map[string]any) string {
	parts := make([]string, 0, len(moved))
	for _, k := range sortedKeys(moved) {
		b, _ := json.Marshal(moved[k]) // decoded JSON always marshals
		parts = append(parts, k+": "+string(b))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkRecursion fails on a schema strict mode cannot compile: a $ref to
// the root, or a definition that reaches itself through $refs.
func checkRecursion(root map[string]any) error {
	refs := map[string][]string{} // definition pointer -> pointers it refers to
	var collect func(n map[string]any, owner string) error
	collect = func(n map[string]any, owner string) error {
		if r, ok := n["$ref"].(string); ok {
			if r == "#" {
				return fmt.Errorf("%w: a $ref to the root schema is recursive", ErrStrictSchema)
			}
			refs[owner] = append(refs[owner], r)
		}
		return forChildren(n, owner, func(c map[string]any, at string) error {
			o := owner
			if strings.Count(at, "/") == 2 && (strings.HasPrefix(at, "#/$defs/") || strings.HasPrefix(at, "#/definitions/")) {
				o = at
			}
			return collect(c, o)
		})
	}
	if err := collect(root, "#"); err != nil {
		return err
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) error
	visit = func(p string) error {
		switch state[p] {
		case 1:
			return fmt.Errorf("%w: %s is recursive", ErrStrictSchema, p)
		case 2:
			return nil
		}
		state[p] = 1
		for _, r := range refs[p] {
			if err := visit(r); err != nil {
				return err
			}
		}
		state[p] = 2
		return nil
	}
	return visit("#")
}
