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

// FuzzStrictSchema: the conversion either refuses a schema with
// ErrStrictSchema or gives JSON that converts to itself.
func FuzzStrictSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"left":{"type":"integer"},"right":{"type":"integer"}},"required":["left","right"],"additionalProperties":false}`,
		`{"type":"object","properties":{"ticket_id":{"type":"string","minLength":1,"maxLength":8},"labels":{"type":["null","array"],"items":{"type":"string"},"maxItems":2}},"required":["ticket_id"]}`,
		`{"type":"object","properties":{"mode":{"enum":["review","ship",1,null]},"n":{"type":"number","minimum":-1.5,"maximum":10}}}`,
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"$defs":{"point":{"type":"object","properties":{"x":{"oneOf":[{"type":"number"},{"type":"null"}]}}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		once, err := strictSchema(json.RawMessage(in))
		if err != nil {
			if !errors.Is(err, ErrStrictSchema) {
				t.Fatalf("error %v does not match ErrStrictSchema", err)
			}
			return
		}
		if !json.Valid(once) {
			t.Fatalf("invalid JSON %s", once)
		}
		twice, err := strictSchema(once)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("converting %s again gave %s, %v", once, twice, err)
		}
	})
}

func TestStrictCache(t *testing.T) {
	var c strictCache
	in := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`)
	want, _ := strictSchema(in)
	for range 2 {
		got, err := c.convert(in)
		if err != nil || string(got) != string(want) {
			t.Fatalf("convert = %s, %v; want %s", got, err, want)
		}
	}
	bad := json.RawMessage(`{"type":"object","additionalProperties":true}`)
	for range 2 {
		if _, err := c.convert(bad); !errors.Is(err, ErrStrictSchema) {
			t.Fatalf("convert(open object) = %v, want ErrStrictSchema", err)
		}
	}
	if len(c.m) != 2 {
		t.Errorf("cache holds %d entries, want 2", len(c.m))
	}
}
