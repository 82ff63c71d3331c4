package toolsets

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DescribeStyle selects how [Registry.Describe] renders tools for a prompt.
type DescribeStyle uint8

const (
	// Brief is one line per tool: name and the first sentence of its
	// description (the {brief_tools} placeholder).
	Brief DescribeStyle = iota
	// Normal is one line per tool: a signature with argument names and
	// types (optional ones marked "?") and the full description (the
	// {tools} placeholder).
	Normal
)

// Describe renders the model-visible tools for a system prompt. Hidden
// tools are never included. A gated tool ([GatingOf]) is marked
// "[approval required]" or "[deferred]", so the model (and a person
// reading the prompt) knows its calls wait for someone.
func (r *Registry) Describe(style DescribeStyle) string {
	var b strings.Builder
	for _, d := range r.ModelDefinitions() {
		desc := d.Description
		if style == Brief {
			desc = firstSentence(desc)
		}
		name := d.Name
		if style == Normal {
			name += "(" + signature(d.Parameters) + ")"
		}
		if d.Visibility == System {
			name += " [system]"
		}
		if g := GatingOf(d); g.Approval {
			name += " [approval required]"
		}
		if g := GatingOf(d); g.Deferred {
			name += " [deferred]"
		}
		if desc == "" {
			fmt.Fprintf(&b, "- %s\n", name)
		} else {
			fmt.Fprintf(&b, "- %s: %s\n", name, desc)
		}
	}
	return b.String()
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// signature renders "left: integer, note?: string" from an object schema.
func signature(params json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(params, &s) != nil {
		return ""
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	// Required arguments first, each group sorted.
	var req, opt []string
	for _, name := range sortedKeys(s.Properties) {
		arg := name
		if !required[name] {
			arg += "?"
		}
		if t := typeText(s.Properties[name].Type); t != "" {
			arg += ": " + t
		}
		if required[name] {
			req = append(req, arg)
		} else {
			opt = append(opt, arg)
		}
	}
	return strings.Join(append(req, opt...), ", ")
}

func typeText(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, p := range v {
			if s, ok := p.(string); ok && s != "null" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "|")
	}
	return ""
}
