package toolsets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaRule names the rule a rejected parameters schema broke. The set is
// closed: the constants below.
type SchemaRule string

// The rules explicit parameters schemas are checked against at
// registration.
const (
	// RuleNotSerializable: the schema value cannot be encoded as JSON.
	RuleNotSerializable SchemaRule = "not_serializable"
	// RuleNotObject: the top level is not a schema of type "object".
	RuleNotObject SchemaRule = "not_object"
	// RuleProperties: "properties" is not an object of schemas.
	RuleProperties SchemaRule = "malformed_properties"
	// RuleRequired: "required" is not a list of distinct strings.
	RuleRequired SchemaRule = "malformed_required"
	// RuleAdditionalProperties: "additionalProperties" is neither a boolean
	// nor a schema object.
	RuleAdditionalProperties SchemaRule = "invalid_additional_properties"
	// RuleInvalid: the schema is well-formed at the top but the JSON Schema
	// library cannot resolve it (a bad keyword value, an unknown $ref, …).
	RuleInvalid SchemaRule = "invalid_schema"
	// RuleInference: no schema can be inferred from the argument type.
	RuleInference SchemaRule = "inference"
)

// SchemaError reports a rejected parameters schema: the rule broken and a
// detail naming the offending part. It matches [ErrInvalidSchema] with
// errors.Is and unwraps to its cause, if any.
type SchemaError struct {
	Rule   SchemaRule
	Detail string
	Err    error
}

func (e *SchemaError) Error() string {
	s := fmt.Sprintf("parameters schema rejected (%s): %s", e.Rule, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrInvalidSchema].
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSchema }

func (e *SchemaError) Unwrap() error { return e.Err }

// schemaJSON encodes an explicit schema given as *jsonschema.Schema,
// map[string]any, json.RawMessage, []byte or string (JSON text), or any
// other JSON-encodable value, and checks the registration rules.
func schemaJSON(schema any) (json.RawMessage, error) {
	var raw []byte
	switch s := schema.(type) {
	case nil:
		return nil, &SchemaError{Rule: RuleNotObject, Detail: "schema is nil"}
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	case string:
		raw = []byte(s)
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil, &SchemaError{Rule: RuleNotSerializable, Detail: fmt.Sprintf("cannot encode %T as JSON", schema), Err: err}
		}
		raw = b
	}
	var top any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, &SchemaError{Rule: RuleNotSerializable, Detail: "schema is not valid JSON", Err: err}
	}
	if dec.More() {
		return nil, &SchemaError{Rule: RuleNotSerializable, Detail: "schema has data after the top-level value"}
	}
	if err := checkTopLevel(top); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, &SchemaError{Rule: RuleNotSerializable, Detail: "schema is not valid JSON", Err: err}
	}
	return buf.Bytes(), nil
}

// checkTopLevel applies the seed's registration rules to a decoded schema.
func checkTopLevel(top any) error {
	obj, ok := top.(map[string]any)
	if !ok {
		return &SchemaError{Rule: RuleNotObject, Detail: fmt.Sprintf("top level is %s, want a schema object", jsonKindName(top))}
	}
	switch t := obj["type"].(type) {
	case string:
		if t != "object" {
			return &SchemaError{Rule: RuleNotObject, Detail: fmt.Sprintf(`top-level "type" is %q, want "object"`, t)}
		}
	case nil:
		return &SchemaError{Rule: RuleNotObject, Detail: `top-level "type" is missing, want "object"`}
	default:
		return &SchemaError{Rule: RuleNotObject, Detail: fmt.Sprintf(`top-level "type" is %s, want the string "object"`, jsonKindName(t))}
	}
	if p, present := obj["properties"]; present {
		props, ok := p.(map[string]any)
		if !ok {
			return &SchemaError{Rule: RuleProperties, Detail: fmt.Sprintf(`"properties" is %s, want an object`, jsonKindName(p))}
		}
		for _, name := range sortedKeys(props) {
			switch props[name].(type) {
			case map[string]any, bool:
			default:
				return &SchemaError{Rule: RuleProperties, Detail: fmt.Sprintf("property %q is %s, want a schema object or boolean", name, jsonKindName(props[name]))}
			}
		}
	}
	if r, present := obj["required"]; present {
		list, ok := r.([]any)
		if !ok {
			return &SchemaError{Rule: RuleRequired, Detail: fmt.Sprintf(`"required" is %s, want an array of strings`, jsonKindName(r))}
		}
		seen := make(map[string]bool, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return &SchemaError{Rule: RuleRequired, Detail: fmt.Sprintf(`"required"[%d] is %s, want a string`, i, jsonKindName(item))}
			}
			if seen[s] {
				return &SchemaError{Rule: RuleRequired, Detail: fmt.Sprintf(`"required" lists %q twice`, s)}
			}
			seen[s] = true
		}
	}
	if a, present := obj["additionalProperties"]; present {
		switch a.(type) {
		case bool, map[string]any:
		default:
			return &SchemaError{Rule: RuleAdditionalProperties, Detail: fmt.Sprintf(`"additionalProperties" is %s, want a boolean or a schema object`, jsonKindName(a))}
		}
	}
	return nil
}

// jsonKindName names the JSON kind of a decoded value for messages.
func jsonKindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// inferSchema infers the parameters schema of argument type t with
// jsonschema-go: struct fields by their json names, descriptions from the
// `jsonschema:"..."` tag, required = fields without omitempty/omitzero,
// no additional properties. Only struct types (or pointers to them) can be
// inferred; maps need an explicit schema.
func inferSchema(t reflect.Type) (json.RawMessage, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch base.Kind() {
	case reflect.Struct:
	case reflect.Map:
		return nil, &SchemaError{Rule: RuleInference, Detail: fmt.Sprintf("argument type %s is a map; give an explicit schema with WithSchema", t)}
	default:
		return nil, &SchemaError{Rule: RuleInference, Detail: fmt.Sprintf("argument type %s is not a struct; tool arguments are a JSON object", t)}
	}
	s, err := jsonschema.ForType(base, nil)
	if err != nil {
		return nil, &SchemaError{Rule: RuleInference, Detail: fmt.Sprintf("cannot infer a schema for %s", t), Err: err}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, &SchemaError{Rule: RuleInference, Detail: fmt.Sprintf("cannot encode the schema inferred for %s", t), Err: err}
	}
	return raw, nil
}
