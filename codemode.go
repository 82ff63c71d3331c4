package weft

import (
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/toolsets"
)

// CodeMode runs the run in code mode: the model is offered only the
// agent's system tools — the code-mode tool run_code (codemode.NewTool),
// and docstr — and acts by writing programs that use the job's objects
// and variables and call the other tools as functions. Each call a
// program makes is an ordinary call of the run (validation, approval,
// deferral, retries, its own events, id "<code call>.<n>"); a program
// that stops resumes by replay. It is recorded in the run's metadata
// (actors.MetaCodeMode).
func CodeMode() RunOption {
	return WithMetadata(map[string]any{actors.MetaCodeMode: true})
}

// WithToolSelection narrows the tools of this run (toolsets.Selection):
// "ALL", "SYSTEM" or "APPLICATION", then "+name" and "-name" entries in
// order; WithToolSelection("ALL", "-send_email") is everything but
// send_email. The model is offered the selected tools only, and a call of
// another (by the model or a program) is refused before it runs. The
// selection is recorded in the run's metadata (actors.MetaToolSelection).
// A malformed entry makes Run fail with a *toolsets.SelectionError; an
// entry naming a tool the run lacks, or a hidden one, fails the run
// (policy_error) at its first model request.
func WithToolSelection(entries ...string) RunOption {
	return func(o *runOptions) {
		if _, err := toolsets.ParseSelection(entries...); err != nil && o.err == nil {
			o.err = err
		}
		list := make([]any, len(entries))
		for i, e := range entries {
			list[i] = e
		}
		WithMetadata(map[string]any{actors.MetaToolSelection: list})(o)
	}
}
