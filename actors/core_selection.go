package actors

import (
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// MetaToolSelection is the run metadata key of the run's tool selection
// (weft.WithToolSelection): its entries, as toolsets.ParseSelection reads
// them. The model is offered the selected tools only, and a call of
// another — by the model or a program — is refused before it runs.
const MetaToolSelection = "weft.tool_selection"

// selection returns the tools run r may use in the step: nil when the run
// has no selection (all), or the error of a selection that is invalid.
func (k core) selection(r *RunState) (map[string]bool, error) {
	raw, ok := r.Metadata[MetaToolSelection]
	if !ok {
		return nil, nil
	}
	list, _ := raw.([]any)
	entries := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, &toolsets.SelectionError{Entry: fmt.Sprint(e), Problem: "malformed", Detail: "entries are strings"}
		}
		entries = append(entries, s)
	}
	sel, err := toolsets.ParseSelection(entries...)
	if err != nil {
		return nil, err
	}
	if k.f.prep == nil || k.f.prep.Registry == nil {
		return nil, nil
	}
	return sel.Apply(k.f.prep.Registry.Definitions())
}

// unselected returns the return that refuses call cs of the active run
// when the run's selection leaves its tool out.
func (k core) unselected(cs *CallState) (toolsets.Return, bool) {
	r := k.st.ActiveRun()
	if r == nil {
		return toolsets.Return{}, false
	}
	keep, err := k.selection(r)
	if err != nil || keep == nil || keep[cs.Tool] {
		return toolsets.Return{}, false
	}
	msg := fmt.Sprintf("tool %q is not selected for this run.", cs.Tool)
	return controlReturn(cs, toolsets.KindNotFound, &toolsets.Control{Message: msg, HowToFix: "Call one of the tools you were given."}), true
}
