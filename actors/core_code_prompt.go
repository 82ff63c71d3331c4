package actors

import (
	"strings"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// MetaCodeMode is the run metadata key (value true) of a run in code mode
// (weft.CodeMode): the model is offered the system tools only (run_code,
// docstr), and acts by writing programs that call the other tools.
const MetaCodeMode = "weft.code_mode"

// codeMode reports whether run r is in code mode.
func codeMode(r *RunState) bool {
	b, _ := r.Metadata[MetaCodeMode].(bool)
	return b
}

// requestTools are the tool definitions a model request of run r offers:
// the step's, or in code mode its system tools only.
func (k core) requestTools(r *RunState) []llm.ToolDefinition {
	keep, _ := k.selection(r) // an invalid selection fails the run first (requestModel)
	if (!codeMode(r) && keep == nil) || k.f.prep.Registry == nil {
		return k.f.prep.Tools
	}
	var out []llm.ToolDefinition
	for _, d := range k.f.prep.Tools {
		if keep != nil && !keep[d.Name] {
			continue
		}
		if def, ok := k.f.prep.Registry.Lookup(d.Name); ok && (!codeMode(r) || def.Visibility == toolsets.System) {
			out = append(out, d)
		}
	}
	return out
}

// instructions are the instructions of a model request of run r: the
// step's, with the tool placeholders expanded (toolsets.ExpandPlaceholders)
// from the tools offered and the session's variables. An expansion that
// fails leaves them as they are: requestModel fails the run first.
func (k core) instructions(r *RunState) string {
	out, err := k.expand(r)
	if err != nil {
		return k.f.prep.Instructions
	}
	return out
}

func (k core) expand(r *RunState) (string, error) {
	in := k.f.prep.Instructions
	if !strings.Contains(in, "{") {
		return in, nil
	}
	var defs []toolsets.Definition
	keep, _ := k.selection(r)
	if k.f.prep.Registry != nil {
		for _, d := range k.f.prep.Registry.ModelDefinitions() {
			if keep != nil && !keep[d.Name] {
				continue
			}
			if !codeMode(r) || d.Visibility != toolsets.System || toolsets.IsCodeTool(d) {
				defs = append(defs, d)
			}
		}
	}
	return toolsets.ExpandPlaceholders(in, defs, k.st.VariableNames())
}

// requestNames are the names of the tools a model request of run r
// offers (model.request records them).
func (k core) requestNames(r *RunState) []string {
	if _, has := r.Metadata[MetaToolSelection]; !has && !codeMode(r) {
		return k.f.prep.Names
	}
	tools := k.requestTools(r)
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}
