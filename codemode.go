package weft

import "github.com/weft-run/weft/actors"

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
