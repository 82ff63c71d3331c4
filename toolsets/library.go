package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Library is a collection of toolsets that are not shown to the model
// directly but searched ([NewSearch]) or called through a proxy
// ([NewProxy]). Build it with [NewLibrary]. Its description
// ([Library.Describe], and its JSON encoding) is serialisable; the Go
// values (tools, functions) are not, and a restored product re-registers
// them. It is read-only after construction and safe for concurrent use.
type Library struct {
	toolsets []libToolset
	tools    []*libTool
	byName   map[string]*libTool
	reg      *Registry // every tool, for proxy calls
}

type libToolset struct {
	toolset      Toolset
	info         ToolsetInfo
	tools        []*libTool
	instructions []Instruction
}

// libTool is one library tool with what search matches on, lower-cased.
type libTool struct {
	tool    Tool
	def     Definition
	info    ToolsetInfo
	name    string
	terms   []string // name split on '_' and '-'
	desc    string
	toolset string // name and id
}

// NewLibrary prepares each toolset once, for no run (a zero
// [ToolsetContext], via [Resolve]), and indexes its tools. Tool names must
// be unique across the library (search loads tools by name); every
// definition is checked as a registry would. Identity problems are not
// construction errors: see [Library.ValidateIDs].
//
// Hidden tools ([Hidden] in the definition a toolset's preparation gives,
// after every wrapper it is built with) are left out of the library: a
// library is what a model searches ([NewSearch]) and calls through a proxy
// ([NewProxy]), and a hidden tool is never reachable by a model. They are
// not searched, listed, described, loaded, restored or called, and a call
// through a proxy by a hidden tool's name gets the answer an unknown name
// gets; their names need not be unique. Application code calls a hidden
// tool through a [Registry] (with [CallerApplication]), not a library.
func NewLibrary(ctx context.Context, toolsets ...Toolset) (*Library, error) {
	l := &Library{byName: map[string]*libTool{}, reg: NewRegistry()}
	for i, ts := range toolsets {
		if ts == nil {
			return nil, fmt.Errorf("library: toolset #%d: %w: nil toolset", i, ErrInvalidDefinition)
		}
		info := ts.Info()
		p, err := Resolve(ctx, ts, &ToolsetContext{})
		if err != nil {
			return nil, fmt.Errorf("library: prepare toolset %q: %w", info.Name, err)
		}
		p.Tools = modelReachable(p.Tools)
		if err := l.reg.AddToolset(ctx, fixed{info: info, p: p}); err != nil {
			return nil, fmt.Errorf("library: %w", err)
		}
		e := libToolset{toolset: ts, info: info, instructions: p.Instructions}
		for _, t := range p.Tools {
			def := t.Definition()
			lt := &libTool{
				tool: inheritDefaults(t, info), def: def, info: info,
				name:    strings.ToLower(def.Name),
				terms:   strings.FieldsFunc(strings.ToLower(def.Name), func(r rune) bool { return r == '_' || r == '-' }),
				desc:    strings.ToLower(def.Description),
				toolset: strings.ToLower(info.Name + " " + info.ID),
			}
			e.tools = append(e.tools, lt)
			l.tools = append(l.tools, lt)
			l.byName[def.Name] = lt
		}
		l.toolsets = append(l.toolsets, e)
	}
	return l, nil
}

// modelReachable returns the tools of tools a model may reach: all but the
// hidden ones (a nil tool is kept, for the registry to refuse).
func modelReachable(tools []Tool) []Tool {
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if t == nil || t.Definition().Visibility != Hidden {
			out = append(out, t)
		}
	}
	return out
}

// Toolsets returns the library's toolsets, in order.
func (l *Library) Toolsets() []Toolset {
	out := make([]Toolset, len(l.toolsets))
	for i, e := range l.toolsets {
		out[i] = e.toolset
	}
	return out
}

// Len returns the number of tools in the library.
func (l *Library) Len() int { return len(l.tools) }

// Definitions returns every tool definition of the library, in order.
func (l *Library) Definitions() []Definition {
	out := make([]Definition, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.def.Clone()
	}
	return out
}

// Lookup returns the definition of the library tool name and the id of
// its toolset (its namespace).
func (l *Library) Lookup(name string) (Definition, string, bool) {
	t := l.byName[name]
	if t == nil {
		return Definition{}, "", false
	}
	return t.def.Clone(), t.info.ID, true
}

// ValidateIDs checks the library's toolset identities in strict mode
// (missing, blank and duplicate ids are errors; duplicate names a
// warning); see [ValidateIDs].
func (l *Library) ValidateIDs() *IDReport { return ValidateIDs(true, l.Toolsets()...) }

// LibraryDescription is the serialisable form of a [Library].
type LibraryDescription struct {
	Toolsets []ToolsetDescription `json:"toolsets"`
}

// ToolsetDescription describes one toolset of a library.
type ToolsetDescription struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Tools        []Definition  `json:"tools"`
	Instructions []Instruction `json:"instructions,omitempty"`
}

// Describe returns the library's serialisable description.
func (l *Library) Describe() LibraryDescription {
	d := LibraryDescription{Toolsets: make([]ToolsetDescription, len(l.toolsets))}
	for i, e := range l.toolsets {
		td := ToolsetDescription{ID: e.info.ID, Name: e.info.Name, Tools: make([]Definition, len(e.tools)), Instructions: append([]Instruction(nil), e.instructions...)}
		for j, t := range e.tools {
			td.Tools[j] = t.def.Clone()
		}
		d.Toolsets[i] = td
	}
	return d
}

// MarshalJSON encodes the library's description.
func (l *Library) MarshalJSON() ([]byte, error) { return json.Marshal(l.Describe()) }
