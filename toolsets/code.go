package toolsets

import (
	"encoding/json"
)

// Code mode (package codemode) runs a model's program in one tool call
// (run_code) whose own calls of tools are ordinary calls the runtime
// schedules. This file holds what the registry and the runtime share with
// it: the journal a program runs with, how a program asks for a call, and
// the live variables a string argument may name.

// CodeInput is what a code-mode call runs its program with: the returns
// of the calls the program made so far, in order (the journal, read from
// the log), and the job's durable variables. The runtime also gives
// Variables to other calls, so a string naming a variable binds in formal
// calls too (see [ConvertArguments]).
type CodeInput struct {
	Journal   []Return                   `json:"journal,omitempty"`
	Variables map[string]json.RawMessage `json:"variables,omitempty"`
	// Objects are the durable variables that hold host objects: variable
	// name → the name the object is registered under, bound again by it.
	Objects map[string]string `json:"objects,omitempty"`
}

// MetaCodeCall is the key of the public metadata of a [KindCallDeferred]
// return by which a code-mode tool asks the runtime for the next call of
// its program: a [CodeCall]. The runtime records the call as a child of
// the code call (id "<call>.<n>"), runs it like any call, and runs the
// code call again with the longer journal. Only a tool marked with
// [MetaCodeTool] may ask.
const MetaCodeCall = "weft.code.call"

// MetaCodeTool marks a definition's metadata (value true) as a code-mode
// tool: its deferred returns carrying [MetaCodeCall] are calls of its
// program.
const MetaCodeTool = "weft.code_tool"

// MetaCodeState is the key of a code call's final return metadata that
// holds its [CodeState]: the variables the program left.
const MetaCodeState = "weft.code.state"

// CodeCall is one call a program asks for.
type CodeCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// CodeState is what a finished program leaves: its variables that
// serialise (Values), the host objects it holds by the name they are
// registered under (Objects: variable → object name), and the variables
// that could not be kept with the reason (Unkept), which the model is told.
type CodeState struct {
	Values  map[string]json.RawMessage `json:"values,omitempty"`
	Objects map[string]string          `json:"objects,omitempty"`
	Unkept  map[string]string          `json:"unkept,omitempty"`
}

// CodeCallOf returns the call a return asks for, if it is a code call's
// request for the next call of its program.
func CodeCallOf(ret *Return) (CodeCall, bool) {
	if ret == nil || ret.Kind != KindCallDeferred || ret.Control == nil {
		return CodeCall{}, false
	}
	v, ok := ret.Control.Metadata[MetaCodeCall]
	if !ok {
		return CodeCall{}, false
	}
	var c CodeCall
	switch x := v.(type) {
	case CodeCall:
		c = x
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &c) != nil {
			return CodeCall{}, false
		}
	}
	return c, c.Name != ""
}

// CodeStateOf returns the state a code call's final return recorded.
func CodeStateOf(ret *Return) (CodeState, bool) {
	if ret == nil || ret.Metadata == nil {
		return CodeState{}, false
	}
	v, ok := ret.Metadata[MetaCodeState]
	if !ok {
		return CodeState{}, false
	}
	var s CodeState
	switch x := v.(type) {
	case CodeState:
		return x, true
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &s) != nil {
			return CodeState{}, false
		}
	}
	return s, true
}

// IsCodeTool reports whether def is a code-mode tool.
func IsCodeTool(def Definition) bool {
	b, _ := def.Metadata[MetaCodeTool].(bool)
	return b
}

// VariableSource is a tool that also holds live values by name (code
// mode's host objects and values): a string argument naming one binds to
// it where the parameter is not a string. The registry asks the tools it
// holds.
type VariableSource interface {
	// LiveVariable returns the live value registered as name.
	LiveVariable(name string) (any, bool)
}
