package toolsets

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Tool documentation for prompts. Instructions may hold placeholders the
// runtime expands from the step's tools before each model request
// ([ExpandPlaceholders]):
//
//	{brief_tools}       one line per tool: its name and the first sentence of its description
//	{tools}             each tool as a call signature with its description
//	{detailed_tools}    Go-signature style, with each parameter's type and doc;
//	                    every tool and parameter must be documented (UndocumentedError)
//	{shared_var_names}  the job's durable variables (code mode), comma-separated
//
// Hidden tools never appear.

// ErrUndocumented is matched by an [UndocumentedError].
var ErrUndocumented = errors.New("toolsets: undocumented tool")

// UndocumentedError names a tool that a listing requiring full docs
// cannot show: the tool without a description, or its parameters
// without one.
type UndocumentedError struct {
	Tool   string
	Params []string // the parameters without a description; none: the tool lacks one
}

func (e *UndocumentedError) Error() string {
	if len(e.Params) == 0 {
		return fmt.Sprintf("tool %q has no description, and {detailed_tools} requires one", e.Tool)
	}
	return fmt.Sprintf("tool %q has parameters without a description (%s), and {detailed_tools} requires them", e.Tool, strings.Join(e.Params, ", "))
}

func (e *UndocumentedError) Is(target error) bool { return target == ErrUndocumented }

// DocStyle is how much [Document] shows.
type DocStyle int

// The documentation styles.
const (
	DocBrief DocStyle = iota
	DocNormal
	DocDetailed
)

// docParam is one parameter as documented.
type docParam struct {
	Name     string
	Type     string
	Doc      string
	Required bool
}

// params returns the documented parameters of a schema, in order.
func params(schema json.RawMessage) []docParam {
	var top struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Format      string `json:"format"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			AnyOf       []struct {
				Type   any    `json:"type"`
				Format string `json:"format"`
			} `json:"anyOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	var out []docParam
	for _, name := range PropertyOrder(schema) {
		p := top.Properties[name]
		typ := goType(p.Type, p.Format)
		switch {
		case len(p.Enum) > 0:
			var vals []string
			for _, v := range p.Enum {
				vals = append(vals, fmt.Sprintf("%q", v))
			}
			typ = "string /* one of " + strings.Join(vals, ", ") + " */"
		case len(p.AnyOf) > 0:
			var ts []string
			for _, m := range p.AnyOf {
				ts = append(ts, goType(m.Type, m.Format))
			}
			typ = "Either[" + strings.Join(ts, ", ") + "]"
		}
		out = append(out, docParam{Name: name, Type: typ, Doc: p.Description, Required: slices.Contains(top.Required, name)})
	}
	return out
}

func goType(t any, format string) string {
	switch format {
	case "date-time":
		return "time.Time"
	case "date":
		return "Date"
	case "time":
		return "TimeOfDay"
	}
	s, _ := t.(string)
	switch s {
	case "string":
		return "string"
	case "integer":
		return "int"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	case "array":
		return "[]any"
	case "object":
		return "object"
	}
	return "any"
}

// PropertyOrder returns the property names of a JSON Schema object in
// the order they are written (nil when schema is not an object schema).
func PropertyOrder(schema json.RawMessage) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(top["properties"])))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		names = append(names, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return names
}

// Document lists defs in style, leaving hidden tools out. DocDetailed
// fails with an [*UndocumentedError] for the first tool without a
// description or with a parameter without one.
func Document(defs []Definition, style DocStyle) (string, error) {
	var b strings.Builder
	for _, d := range defs {
		if d.Visibility == Hidden {
			continue
		}
		ps := params(d.Parameters)
		if style == DocDetailed {
			var missing []string
			for _, p := range ps {
				if strings.TrimSpace(p.Doc) == "" {
					missing = append(missing, p.Name)
				}
			}
			if strings.TrimSpace(d.Description) == "" || len(missing) > 0 {
				return "", &UndocumentedError{Tool: d.Name, Params: missing}
			}
		}
		switch style {
		case DocBrief:
			fmt.Fprintf(&b, "- %s: %s\n", d.Name, firstSentence(d.Description))
		case DocNormal:
			names := make([]string, len(ps))
			for i, p := range ps {
				names[i] = p.Name
			}
			fmt.Fprintf(&b, "- %s(%s): %s\n", d.Name, strings.Join(names, ", "), strings.TrimSpace(d.Description))
		default:
			b.WriteString(Signature(d))
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// Signature is tool d in Go-signature style with its description and a
// line per parameter.
func Signature(d Definition) string {
	ps := params(d.Parameters)
	var b strings.Builder
	args := make([]string, len(ps))
	for i, p := range ps {
		args[i] = p.Name + " " + p.Type
		if !p.Required {
			args[i] += " /* optional */"
		}
	}
	fmt.Fprintf(&b, "func %s(%s)\n", d.Name, strings.Join(args, ", "))
	if desc := strings.TrimSpace(d.Description); desc != "" {
		for _, line := range strings.Split(desc, "\n") {
			fmt.Fprintf(&b, "    // %s\n", strings.TrimSpace(line))
		}
	}
	for _, p := range ps {
		if p.Doc != "" {
			fmt.Fprintf(&b, "    //   %s: %s\n", p.Name, p.Doc)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// ExpandPlaceholders expands the tool placeholders of text (see above)
// with defs and the job's variable names. Text without "{" is returned as
// it is.
func ExpandPlaceholders(text string, defs []Definition, variables []string) (string, error) {
	if !strings.Contains(text, "{") {
		return text, nil
	}
	for _, ph := range []struct {
		name  string
		style DocStyle
	}{{"{brief_tools}", DocBrief}, {"{tools}", DocNormal}, {"{detailed_tools}", DocDetailed}} {
		if !strings.Contains(text, ph.name) {
			continue
		}
		doc, err := Document(defs, ph.style)
		if err != nil {
			return "", err
		}
		text = strings.ReplaceAll(text, ph.name, doc)
	}
	if strings.Contains(text, "{shared_var_names}") {
		v := strings.Join(variables, ", ")
		if v == "" {
			v = "(none yet)"
		}
		text = strings.ReplaceAll(text, "{shared_var_names}", v)
	}
	return text, nil
}
