package actors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// Code mode in the session core (package codemode runs the programs).
//
// A code call (a call of a tool marked toolsets.MetaCodeTool, run_code)
// runs its program against the journal of the returns its own calls
// recorded. At the first call of the program without a recorded return
// the tool returns a deferred return carrying the call
// (toolsets.MetaCodeCall). The core does not record that return: it
// records the call as a child of the code call instead — tool.requested
// with the id "<code call>.<n>" and parent — and the child runs like any
// call of the batch (validation, the approval policy, deferral, retries,
// its events; it may make the run wait). Once every child has a final
// return, the code call runs again with the longer journal; its final
// return ends it. Children count against Limits.ToolCalls (the fold
// counts them, from the log, so a replay or a restart does not count
// twice); their returns reach the model only through the code call's.
// A finished program's variables (toolsets.MetaCodeState in its return)
// are folded into SessionState.Code and given to the job's later calls.

// codeCall decides on the return ret of code call cs of run r when it asks
// for the next call of its program: the child's tool.requested, or, past
// the run's tool-call limit, the code call's return saying so. ok is
// false when ret is not such a request, or cs is not a code call.
func (k core) codeCall(r *RunState, cs *CallState, ret *toolsets.Return) (decision, bool) {
	call, ok := toolsets.CodeCallOf(ret)
	if !ok || k.f.prep == nil || k.f.prep.Registry == nil {
		return decision{}, false
	}
	if def, found := k.f.prep.Registry.Lookup(cs.Tool); !found || !toolsets.IsCodeTool(def) || k.look.IsRemoteTool(cs.Tool) {
		return decision{}, false
	}
	if spec := k.f.spec; spec != nil && exceeds(r.Usage.ToolCalls+1, spec.Limits.ToolCalls) {
		msg := fmt.Sprintf("the program stopped before calling %s: the run reached its limit of %d tool calls", call.Name, *spec.Limits.ToolCalls)
		limited := controlReturn(cs, toolsets.KindUserError, &toolsets.Control{Message: msg})
		return decision{recs: []record{limitedReturnedEvent(k.session, r.ID, limited, k.maxMsg)}, queue: true, returned: cs.ID}, true
	}
	id := cs.ID + "." + strconv.Itoa(len(r.children(cs.ID))+1)
	d := events.NewToolRequested(call.Name, k.f.prep.ToolsetOf[call.Name].Name, call.Arguments)
	d.Parent = cs.ID
	return decision{recs: []record{newRecord(events.TypeToolRequested, k.session, r.ID, id, d)}, queue: true, returned: cs.ID}, true
}

// children returns the calls code call id made, in order.
func (r *RunState) children(id string) []*CallState {
	var out []*CallState
	for _, c := range r.Batch {
		if c.Parent == id {
			out = append(out, c)
		}
	}
	return out
}

// waitsForChild reports whether code call cs waits for a call of its
// program that has no final return yet.
func (r *RunState) waitsForChild(cs *CallState) bool {
	for _, c := range r.Batch {
		if c.Parent == cs.ID && !c.Done() {
			return true
		}
	}
	return false
}

// codeInput is what call cs runs with: for a code call, the journal of
// its children's returns; for every call, the job's durable variables.
// nil when there is neither.
func (k core) codeInput(r *RunState, cs *CallState) *toolsets.CodeInput {
	var in *toolsets.CodeInput
	if v := k.st.Code; len(v.Values) > 0 || len(v.Objects) > 0 {
		in = &toolsets.CodeInput{Variables: v.Values, Objects: v.Objects}
	}
	kids := r.children(cs.ID)
	if len(kids) == 0 {
		return in // a first run has no journal; other calls need none
	}
	if in == nil {
		in = &toolsets.CodeInput{}
	} else {
		c := *in
		in = &c
	}
	in.Journal = make([]toolsets.Return, len(kids))
	for i, c := range kids {
		in.Journal[i] = *c.Return
	}
	return in
}

// CodeVariables are a session's durable code-mode variables: what the
// programs of its runs left (their values, and the host objects they hold
// by registered name).
type CodeVariables struct {
	Values  map[string]json.RawMessage
	Objects map[string]string
}

// foldCode folds the state a finished program left into the session's
// variables.
func (s *SessionState) foldCode(ret *toolsets.Return) {
	st, ok := toolsets.CodeStateOf(ret)
	if !ok {
		return
	}
	if s.Code.Values == nil {
		s.Code.Values = map[string]json.RawMessage{}
	}
	if s.Code.Objects == nil {
		s.Code.Objects = map[string]string{}
	}
	for k, v := range st.Values {
		s.Code.Values[k] = v
		delete(s.Code.Objects, k)
	}
	for k, v := range st.Objects {
		s.Code.Objects[k] = v
		delete(s.Code.Values, k)
	}
}

// VariableNames returns the names of the session's durable variables,
// sorted.
func (s *SessionState) VariableNames() []string {
	var names []string
	for k := range s.Code.Values {
		names = append(names, k)
	}
	for k := range s.Code.Objects {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// refuseInvalid is refuseInvalid (arguments.go) with the session's
// durable variables, so that a string naming one binds in the check as it
// does in the call.
func (k core) refuseInvalid(cs *CallState) (toolsets.Return, bool) {
	r := k.st.ActiveRun()
	if r == nil || (len(k.st.Code.Values) == 0 && len(k.st.Code.Objects) == 0) {
		return refuseInvalid(k.f.prep, cs)
	}
	ret, refused := k.f.prep.Registry.Refusal(toolsets.Invocation{CallID: cs.ID, Name: cs.Tool, Arguments: cs.Arguments, Code: k.codeInput(r, cs)})
	if !refused || ret.Kind != toolsets.KindInvalidArguments {
		return toolsets.Return{}, false
	}
	return ret, true
}
