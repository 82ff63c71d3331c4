package anthropic

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestStrictSchema(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"closes objects and keeps what strict mode takes",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"left":{"type":"integer"},"tags":{"type":["null","array"],"items":{"type":"string","format":"email"},"minItems":1}},"required":["left"]}`,
			`{"additionalProperties":false,"properties":{"left":{"type":"integer"},"tags":{"items":{"format":"email","type":"string"},"minItems":1,"type":["null","array"]}},"required":["left"],"type":"object"}`},
		{"moves unsupported keywords into the description",
			`{"type":"object","properties":{"n":{"type":"number","description":"How many.","minimum":-1.5,"maximum":10},"id":{"type":"string","minLength":1,"maxLength":8,"format":"ticket-id"},"l":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":5}}}`,
			`{"additionalProperties":false,"properties":{"id":{"description":"{format: \"ticket-id\", maxLength: 8, minLength: 1}","type":"string"},"l":{"description":"{maxItems: 5, minItems: 2}","items":{"type":"string"},"type":"array"},"n":{"description":"How many.\n\n{maximum: 10, minimum: -1.5}","type":"number"}},"type":"object"}`},
		{"oneOf becomes anyOf, nested objects are closed",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"null"}]}}}`,
			`{"additionalProperties":false,"properties":{"v":{"anyOf":[{"additionalProperties":false,"properties":{"a":{"type":"string"}},"type":"object"},{"type":"null"}]}},"type":"object"}`},
		{"an object without properties gets an empty one",
			`{"type":"object"}`,
			`{"additionalProperties":false,"properties":{},"type":"object"}`},
		{"definitions are converted, non-recursive refs kept",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"$defs":{"point":{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0}}}}}`,
			`{"$defs":{"point":{"additionalProperties":false,"properties":{"x":{"description":"{exclusiveMinimum: 0}","type":"number"}},"type":"object"}},"additionalProperties":false,"properties":{"p":{"$ref":"#/$defs/point"}},"type":"object"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := strictSchema(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("strictSchema:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestStrictSchemaRefused(t *testing.T) {
	cases := map[string]string{
		"open object":          `{"type":"object","additionalProperties":true}`,
		"map of strings":       `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`,
		"tuple":                `{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},{"type":"number"}]}}}`,
		"oneOf beside anyOf":   `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"}],"anyOf":[{"type":"number"}]}}}`,
		"ref to the root":      `{"type":"object","properties":{"child":{"$ref":"#"}}}`,
		"recursive definition": `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`,
		"mutually recursive":   `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}}}`,
		"not an object":        `true`,
		"not JSON":             `{`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := strictSchema(json.RawMessage(in)); !errors.Is(err, ErrStrictSchema) {
				t.Errorf("strictSchema = %s, %v; want ErrStrictSchema", got, err)
			}
		})
	}
}
