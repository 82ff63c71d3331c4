package openai_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		pointer string // of the *SchemaError, when the conversion fails
	}{
		{name: "empty", in: ``, want: `{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{name: "all required already", in: `{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"]}`,
			want: `{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"],"additionalProperties":false}`},
		{name: "optional made nullable", in: `{"type":"object","properties":{"a":{"type":"string","description":"A."},"b":{"type":["integer","string"]}}}`,
			want: `{"type":"object","properties":{"a":{"type":["string","null"],"description":"A."},"b":{"type":["integer","string","null"]}},"required":["a","b"],"additionalProperties":false}`},
		{name: "optional already nullable", in: `{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			want: `{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`},
		{name: "optional ref wrapped", in: `{"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"A point."}},"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}}}`,
			want: `{"type":"object","properties":{"p":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"null"}],"description":"A point."}},"required":["p"],"additionalProperties":false,"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}}`},
		{name: "oneOf becomes anyOf", in: `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"]}`,
			want: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"],"additionalProperties":false}`},
		{name: "dropped keywords", in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"s":{"type":"string","minLength":1,"maxLength":9,"default":"x","format":"uri","pattern":"^a"},"l":{"type":"array","items":{"type":"string"},"uniqueItems":true,"minItems":1}},"required":["s","l"]}`,
			want: `{"type":"object","properties":{"s":{"type":"string","pattern":"^a"},"l":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["l","s"],"additionalProperties":false}`},
		{name: "single allOf merged", in: `{"type":"object","properties":{"o":{"allOf":[{"type":"object","properties":{"k":{"type":"boolean"}},"required":["k"]}]}},"required":["o"]}`,
			want: `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"boolean"}},"required":["k"],"additionalProperties":false}},"required":["o"],"additionalProperties":false}`},
		{name: "open map", in: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"]}`, pointer: "/properties/m"},
		{name: "additional properties true", in: `{"type":"object","properties":{},"additionalProperties":true}`, pointer: ""},
		{name: "free-form value", in: `{"type":"object","properties":{"any":{}}}`, pointer: "/properties/any"},
		{name: "untyped value", in: `{"type":"object","properties":{"d":{"description":"anything"}}}`, pointer: "/properties/d"},
		{name: "not", in: `{"type":"object","properties":{"n":{"type":"string","not":{"const":"x"}}}}`, pointer: "/properties/n"},
		{name: "if then else", in: `{"type":"object","properties":{},"if":{"required":["a"]},"then":{"required":["b"]}}`, pointer: ""},
		{name: "allOf of two", in: `{"type":"object","properties":{"o":{"allOf":[{"type":"object"},{"type":"object"}]}}}`, pointer: "/properties/o"},
		{name: "tuple", in: `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}]}}}`, pointer: "/properties/t"},
		{name: "root not an object", in: `{"type":"string"}`, pointer: ""},
		{name: "remote ref", in: `{"type":"object","properties":{"r":{"$ref":"https://example.com/s.json"}}}`, pointer: "/properties/r"},
		{name: "not JSON", in: `{"type":`, pointer: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := openai.StrictSchema(json.RawMessage(tt.in))
			if tt.want == "" {
				se, ok := errors.AsType[*openai.SchemaError](err)
				if !ok || !errors.Is(err, openai.ErrStrictSchema) {
					t.Fatalf("StrictSchema = %s, %v; want a *SchemaError", got, err)
				}
				if se.Pointer != tt.pointer {
					t.Errorf("pointer = %q, want %q (%v)", se.Pointer, tt.pointer, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			_ = json.Unmarshal(got, &gotV)
			if err := json.Unmarshal([]byte(tt.want), &wantV); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantV, gotV); d != "" {
				t.Errorf("StrictSchema (-want +got):\n%s", d)
			}
		})
	}
}

// A strict tool whose schema cannot be converted fails the request before
// anything is sent; the same tool without Strict goes as it is.
func TestStrictToolRefused(t *testing.T) {
	s := newServer(t, replay(t, "chat_text.response.json"))
	m := newModel(t, s)
	tool := llm.ToolDefinition{Name: "tag", Description: "Tag.", Strict: true, Parameters: json.RawMessage(`{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`)}
	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}, Tools: []llm.ToolDefinition{tool}}
	_, err := m.Request(t.Context(), req)
	if !errors.Is(err, openai.ErrStrictSchema) {
		t.Fatalf("err = %v, want ErrStrictSchema", err)
	}
	if me := modelError(t, err); me.Retryable {
		t.Error("retryable")
	}
	if len(s.requests()) != 0 {
		t.Fatal("a request was sent")
	}
	req.Tools[0].Strict = false
	if _, err := m.Request(t.Context(), req); err != nil {
		t.Fatal(err)
	}
}
