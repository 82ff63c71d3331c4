package openai_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/llm/openai"
)

// StrictSchema never panics, gives valid JSON, and is idempotent: a
// converted schema converts to itself.
func FuzzStrictSchema(f *testing.F) {
	for _, s := range []string{
		``, `{"type":"object"}`, `{"type":"string"}`,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1},"b":{"enum":["x","y"],"type":"string"}},"required":["a"]}`,
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"object","properties":{"q":{"oneOf":[{"type":"integer"},{"type":"null"}]}}}}}`,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":["number","null"]}}}}}}`,
		`{"type":"object","properties":{"o":{"allOf":[{"type":"object","properties":{"k":{"type":"boolean"}}}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := openai.StrictSchema(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		again, err := openai.StrictSchema(out)
		if err != nil {
			t.Fatalf("converted schema %s does not convert: %v", out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("not idempotent:\n%s\n%s", out, again)
		}
	})
}
