package toolsets

import "slices"

// Identities returns the identities a toolset answers to as a selector
// target: its own [ToolsetInfo] and, for a wrapper (a toolset with an
// Unwrap() Toolset method, as [Wrapped]), those of the toolsets it wraps,
// outermost first, without repeats. So an entry naming "workspace" still
// selects the tools of Prefixed(workspace, "ws"), whose own identity is
// "ws_workspace". The toolsets a dynamic toolset or factory returns
// ([Preparation.Toolsets]) are not among them: select their tools by name
// or bundle.
func Identities(ts Toolset) []ToolsetInfo {
	var out []ToolsetInfo
	for depth := 0; ts != nil && depth <= maxUnwrap; depth++ {
		info := ts.Info()
		if !slices.ContainsFunc(out, func(o ToolsetInfo) bool { return o.Name == info.Name && o.ID == info.ID }) {
			out = append(out, info)
		}
		u, ok := ts.(interface{ Unwrap() Toolset })
		if !ok {
			break
		}
		ts = u.Unwrap()
	}
	return out
}

// maxUnwrap bounds how deep [Identities] follows wrappers.
const maxUnwrap = 64

// knower is implemented by the toolsets of this package whose tools can
// be known without preparing them for a run.
type knower interface {
	knownTools() (tools []Tool, complete bool, err error)
}

// KnownTools returns the tools ts is known to offer without preparing it
// for a run (no I/O, no [ToolsetContext]), and whether ts can be listed
// at all (ok). It lists [Static] and [FunctionToolset] toolsets (the
// tools added so far), the library of a [SearchToolset] (the tools a
// search may load, and the search tool), and the wrappers of this
// package over those, except [Prepared], whose result depends on the
// context. Dynamic toolsets, factories, proxies and the toolsets of other
// packages cannot be listed (ok false). An error is a wrapper that refuses
// the listed tools (a selector entry that matches nothing, an invalid
// prefixed name).
//
// Policies use it to check their entries at construction time (NewAgent)
// where they can; entries are checked again when the toolsets are prepared.
func KnownTools(ts Toolset) (tools []Tool, ok bool, err error) {
	k, is := ts.(knower)
	if !is {
		return nil, false, nil
	}
	return k.knownTools()
}

func (s *Static) knownTools() ([]Tool, bool, error) {
	return slices.Clone(s.tools), true, nil
}

func (fs *FunctionToolset) knownTools() ([]Tool, bool, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.tools), true, nil
}

func (s *SearchToolset) knownTools() ([]Tool, bool, error) {
	out := make([]Tool, 0, len(s.lib.tools)+1)
	out = append(out, s.tool)
	for _, t := range s.lib.tools {
		out = append(out, t.tool)
	}
	return out, true, nil
}

// Targets returns the selector targets of tools held by the toolsets ids.
func Targets(tools []Tool, ids []ToolsetInfo) []Target {
	out := make([]Target, len(tools))
	for i, t := range tools {
		out[i] = Target{Definition: t.Definition(), Toolsets: ids}
	}
	return out
}
