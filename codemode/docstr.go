package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-run/weft/toolsets"
)

// DocstrName is the name of the documentation tool.
const DocstrName = "docstr"

// NewDocstrTool returns the system tool docstr over env: given the name of
// a tool a program may call, or of an object or value of env, it returns
// its documentation — a tool in Go-signature style with its parameters'
// docs, an object by its Repr, its Doc (Documented) and its attributes. A
// hidden tool is described as unknown; an unknown name gets a NameError
// naming the closest names. Programs have the same as a function,
// docstr(name or value).
func NewDocstrTool(env *Env) toolsets.Tool { return &docstrTool{env: env} }

type docstrTool struct{ env *Env }

var docstrSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The name of a tool, or of an object or variable in the job."}},"required":["name"],"additionalProperties":false}`)

func (t *docstrTool) Definition() toolsets.Definition {
	return toolsets.Definition{
		Name:        DocstrName,
		Description: "Describe a tool (its signature and parameters) or an object of the job (its attributes and methods).",
		Parameters:  docstrSchema,
		Visibility:  toolsets.System,
	}
}

func (t *docstrTool) Call(_ context.Context, _ *toolsets.ToolContext, raw json.RawMessage) (any, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, toolsets.InvalidArguments("name", err.Error(), "Pass the name to describe.")
	}
	doc, err := t.env.Describe(a.Name)
	if err != nil {
		return nil, toolsets.Feedback(err.Error())
	}
	return doc, nil
}

// Describe documents the tool, object or value named name.
func (e *Env) Describe(name string) (string, error) {
	for _, tl := range e.Tools {
		def := tl.Definition()
		if def.Name == name && def.Visibility != toolsets.Hidden {
			return toolsets.Signature(def), nil
		}
	}
	if v, ok := e.Objects[name]; ok {
		return describeObject(name, v), nil
	}
	if v, ok := e.Values[name]; ok {
		return fmt.Sprintf("%s = %s", name, Render(v)), nil
	}
	return "", fmt.Errorf("%s", e.nameError("tool or object", name))
}

func describeObject(name string, v any) string {
	o := asObject(v)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", name, o.Repr())
	if d, ok := v.(Documented); ok {
		fmt.Fprintf(&b, "    %s\n", strings.TrimSpace(d.Doc()))
	}
	names := o.AttrNames()
	slices.Sort(names)
	for _, a := range names {
		av, _ := o.Attr(a)
		switch av.(type) {
		case Method, func([]any, map[string]any) (any, error):
			fmt.Fprintf(&b, "    .%s(…)  method\n", a)
		default:
			fmt.Fprintf(&b, "    .%s = %s\n", a, Render(av))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
