package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/weft-run/weft/toolsets"
)

func echo[A any](_ context.Context, a A) (A, error) { return a, nil }

type inferArgs struct {
	TicketID string   `json:"ticket_id" jsonschema:"the ticket to fetch"`
	History  bool     `json:"include_history,omitempty"`
	Tags     []string `json:"tags,omitzero"`
	Limit    *int     `json:"limit,omitempty"`
	skipped  int      //lint:ignore U1000 unexported: schema inference must leave it out
	Ignored  string   `json:"-"`
}

func TestInferSchema(t *testing.T) {
	tests := []struct {
		name string
		tool func() (toolsets.Tool, error)
		want string
	}{
		{
			name: "struct with tags",
			tool: func() (toolsets.Tool, error) { return toolsets.NewFunc("fetch", echo[inferArgs]) },
			want: `{"type":"object","properties":{"ticket_id":{"type":"string","description":"the ticket to fetch"},"include_history":{"type":"boolean"},"tags":{"type":["null","array"],"items":{"type":"string"}},"limit":{"type":["null","integer"]}},"required":["ticket_id"],"additionalProperties":false}`,
		},
		{
			name: "pointer to struct",
			tool: func() (toolsets.Tool, error) { return toolsets.NewFunc("fetch", echo[*addArgs]) },
			want: `{"type":"object","properties":{"left":{"type":"integer","description":"the left operand"},"right":{"type":"integer","description":"the right operand"}},"required":["left","right"],"additionalProperties":false}`,
		},
		{
			name: "empty struct",
			tool: func() (toolsets.Tool, error) { return toolsets.NewFunc("mode", echo[struct{}]) },
			want: `{"type":"object","additionalProperties":false}`,
		},
		{
			name: "explicit schema overrides inference",
			tool: func() (toolsets.Tool, error) {
				return toolsets.NewFunc("fetch", echo[addArgs], toolsets.WithSchema(`{"type":"object","properties":{}}`))
			},
			want: `{"type":"object","properties":{}}`,
		},
		{
			name: "typed jsonschema value",
			tool: func() (toolsets.Tool, error) {
				return toolsets.NewFunc("inspect", echo[map[string]any], toolsets.WithSchema(&jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{}}))
			},
			want: `{"type":"object","additionalProperties":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.tool()
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(tool.Definition().Parameters, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchemaRejected(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		rule   toolsets.SchemaRule
		detail string
	}{
		{"not serialisable", map[string]any{"type": "object", "x": make(chan int)}, toolsets.RuleNotSerializable, "cannot encode"},
		{"NaN", map[string]any{"type": "object", "default": math.NaN()}, toolsets.RuleNotSerializable, "cannot encode"},
		{"invalid JSON text", `{"type":`, toolsets.RuleNotSerializable, "not valid JSON"},
		{"trailing data", `{"type":"object"} {}`, toolsets.RuleNotSerializable, "after the top-level"},
		{"array top level", `[1]`, toolsets.RuleNotObject, "an array"},
		{"string type", `{"type":"string"}`, toolsets.RuleNotObject, `"string"`},
		{"missing type", `{"properties":{}}`, toolsets.RuleNotObject, "missing"},
		{"type list", `{"type":["object"]}`, toolsets.RuleNotObject, "an array"},
		{"nil", nil, toolsets.RuleNotObject, "nil"},
		{"properties array", `{"type":"object","properties":[]}`, toolsets.RuleProperties, `"properties" is an array`},
		{"property not schema", `{"type":"object","properties":{"a":3}}`, toolsets.RuleProperties, `property "a" is a number`},
		{"required string", `{"type":"object","required":"a"}`, toolsets.RuleRequired, `"required" is a string`},
		{"required number item", `{"type":"object","required":["a",1]}`, toolsets.RuleRequired, `"required"[1] is a number`},
		{"required duplicate", `{"type":"object","required":["a","a"]}`, toolsets.RuleRequired, `"a" twice`},
		{"additionalProperties string", `{"type":"object","additionalProperties":"yes"}`, toolsets.RuleAdditionalProperties, "a string"},
		{"additionalProperties array", `{"type":"object","additionalProperties":[]}`, toolsets.RuleAdditionalProperties, "an array"},
		{"unresolvable ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, toolsets.RuleInvalid, "resolve"},
		{"unknown type name", `{"type":"object","properties":{"a":{"type":"strnig"}}}`, toolsets.RuleInvalid, `#/properties/a: "type" strnig`},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, toolsets.RuleInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toolsets.NewFunc("inspect", echo[map[string]any], toolsets.WithSchema(tt.schema))
			var se *toolsets.SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			if !errors.Is(err, toolsets.ErrInvalidSchema) {
				t.Errorf("err does not match ErrInvalidSchema")
			}
			if se.Rule != tt.rule {
				t.Errorf("rule = %s, want %s (%v)", se.Rule, tt.rule, err)
			}
			if !strings.Contains(se.Detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", se.Detail, tt.detail)
			}
			if !strings.Contains(err.Error(), `"inspect"`) {
				t.Errorf("error %q does not name the tool", err)
			}
		})
	}
}

// classTool is a tool whose definition is given as is, to test the
// registry's own checks.
type classTool struct{ def toolsets.Definition }

func (c classTool) Definition() toolsets.Definition { return c.def }
func (c classTool) Call(context.Context, *toolsets.ToolContext, json.RawMessage) (any, error) {
	return "ok", nil
}

func TestDefinitionRejected(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name string
		make func() error
		is   error
	}{
		{"map args without schema", func() error { _, err := toolsets.NewFunc("inspect", echo[map[string]any]); return err }, toolsets.ErrInvalidSchema},
		{"non-struct args", func() error { _, err := toolsets.NewFunc("n", echo[int]); return err }, toolsets.ErrInvalidSchema},
		{"uninferable field", func() error {
			_, err := toolsets.NewFunc("n", echo[struct{ C chan int }])
			return err
		}, toolsets.ErrInvalidSchema},
		{"tool context as args", func() error {
			_, err := toolsets.NewFunc("n", echo[*toolsets.ToolContext])
			return err
		}, toolsets.ErrInvalidDefinition},
		{"bad name", func() error { _, err := toolsets.NewFunc("no spaces", echo[addArgs]); return err }, toolsets.ErrInvalidName},
		{"strict without description", func() error {
			_, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithStrict(true))
			return err
		}, toolsets.ErrMissingDescription},
		{"negative retries", func() error {
			_, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithMaxRetries(-1))
			return err
		}, toolsets.ErrInvalidDefinition},
		{"zero timeout", func() error { _, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithTimeout(0)); return err }, toolsets.ErrInvalidDefinition},
		{"toolset option on tool", func() error { _, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithID("x")); return err }, toolsets.ErrInvalidDefinition},
		{"bad visibility", func() error {
			_, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithVisibility(7))
			return err
		}, toolsets.ErrInvalidDefinition},
		{"metadata not JSON", func() error {
			_, err := toolsets.NewFunc("add", echo[addArgs], toolsets.WithMetadata(map[string]any{"f": func() {}}))
			return err
		}, toolsets.ErrInvalidDefinition},
		{"class tool strict without description", func() error {
			return toolsets.NewRegistry().Register(classTool{toolsets.Definition{Name: "deploy", Strict: true, Parameters: obj}})
		}, toolsets.ErrMissingDescription},
		{"class tool without schema", func() error {
			return toolsets.NewRegistry().Register(classTool{toolsets.Definition{Name: "deploy"}})
		}, toolsets.ErrInvalidSchema},
		{"class tool bad schema", func() error {
			return toolsets.NewRegistry().Register(classTool{toolsets.Definition{Name: "deploy", Parameters: json.RawMessage(`{"type":"object","required":"x"}`)}})
		}, toolsets.ErrInvalidSchema},
		{"class tool bad name", func() error {
			return toolsets.NewRegistry().Register(classTool{toolsets.Definition{Name: "", Parameters: obj}})
		}, toolsets.ErrInvalidName},
		{"duplicate in registry", func() error {
			return toolsets.NewRegistry().Register(classTool{toolsets.Definition{Name: "a", Parameters: obj}}, classTool{toolsets.Definition{Name: "a", Parameters: obj}})
		}, toolsets.ErrDuplicateTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make()
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
		})
	}
}
