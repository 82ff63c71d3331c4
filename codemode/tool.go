package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-run/weft/toolsets"
)

// Env is what a program runs against.
type Env struct {
	// Objects are the live application objects every program can use
	// by name: an [Object], or any struct (shown through [Struct]). A
	// variable holding one is kept as a handle (its name here) and bound
	// again by that name after a restart; a tool parameter that is not a
	// string receives the object itself when the program passes it.
	Objects map[string]any
	// Values are plain values every program starts with ("today").
	Values map[string]any
	// Tools are the tools a program may call, as functions with
	// positional (in the schema's property order) and keyword arguments.
	// Hidden tools are not callable, and a program naming one is refused
	// before it runs. The runtime runs the calls: the tools must be in
	// the run's inventory too.
	Tools []toolsets.Tool
}

// ToolName is the name of the code-mode tool.
const ToolName = "run_code"

// NewTool returns the code-mode system tool run_code over env: it runs the
// model's Starlark program (its "code" argument) against env. The tool
// never runs a tool itself: at the first call its program makes without
// a recorded return it asks the runtime for that call (a deferred return
// carrying toolsets.MetaCodeCall); the runtime records and runs the call
// like any other (validation, approval, deferral, retries, events, with
// the id "<code call>.<n>") and runs the program again from the start
// with the longer journal. So a program that stops — for an approval, a
// deferred result, a crash — resumes by replay, and no side effect runs
// twice. Its final return holds the print output, the last expression's
// value, and the variables the program left (toolsets.MetaCodeState),
// which the runtime keeps for the job's later programs.
func NewTool(env *Env) toolsets.Tool { return &codeTool{env: env} }

type codeTool struct{ env *Env }

type codeArgs struct {
	Code string `json:"code" jsonschema:"the Starlark program to run"`
}

var codeSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"The Starlark (Python-like) program to run. Tools are functions; the job's objects and variables are names in scope. print() output and the value of the last expression are returned."}},"required":["code"],"additionalProperties":false}`)

func (t *codeTool) Definition() toolsets.Definition {
	zero := 0
	return toolsets.Definition{
		Name: ToolName,
		Description: "Run a Starlark program against the job's objects, variables and tools. " +
			"Variables you assign are kept for later programs. Tools are called like functions, with positional or keyword arguments.",
		Parameters: codeSchema,
		Visibility: toolsets.System,
		MaxRetries: &zero,
		Metadata:   map[string]any{toolsets.MetaCodeTool: true},
	}
}

// LiveVariable implements toolsets.VariableSource: the host's objects and
// values by name.
func (t *codeTool) LiveVariable(name string) (any, bool) {
	if v, ok := t.env.Objects[name]; ok {
		return v, true
	}
	v, ok := t.env.Values[name]
	return v, ok
}

func (t *codeTool) Call(ctx context.Context, tc *toolsets.ToolContext, raw json.RawMessage) (any, error) {
	var a codeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, toolsets.InvalidArguments("code", err.Error(), "Pass the program as the string argument code.")
	}
	var in *toolsets.CodeInput
	if tc != nil {
		in = tc.Code
	}
	out, err := t.env.Run(ctx, a.Code, in)
	if err != nil {
		return toolsets.Result{Content: err.Error(), Failed: true}, nil
	}
	if out.Call != nil {
		return nil, toolsets.CallDeferred(fmt.Sprintf("the program calls %s (call %d)", out.Call.Name, out.Calls),
			map[string]any{toolsets.MetaCodeCall: *out.Call})
	}
	return toolsets.Result{Content: Summary(out), Metadata: map[string]any{toolsets.MetaCodeState: out.State}}, nil
}

// Summary is the text the model reads of a finished program: its output,
// the value of its last expression, and the variables that could not be
// kept with the reason.
func Summary(out *Outcome) string {
	var b strings.Builder
	b.WriteString(out.Output)
	if out.Value != "" {
		b.WriteString(out.Value)
		b.WriteByte('\n')
	}
	if len(out.State.Unkept) > 0 {
		names := make([]string, 0, len(out.State.Unkept))
		for k := range out.State.Unkept {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&b, "note: variable %s is not kept for later programs: %s\n", k, out.State.Unkept[k])
		}
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return strings.TrimRight(b.String(), "\n")
}
