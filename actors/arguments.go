package actors

import (
	"encoding/json"

	"github.com/weft-run/weft/toolsets"
)

// refuseMalformed returns the return of a call whose arguments are not
// valid JSON: the registry's refusal (invalid_arguments saying that the
// arguments are not JSON, with the tool's budget; not_found for an unknown
// tool), decided where the batch is scheduled and recorded at once. Such a
// call never reaches a tool actor or a worker: its arguments cannot travel
// in a ToolRequest, and no tool would run with them anyway. It goes back
// to the model as a retry prompt and counts against the tool's run-level
// retry budget like any invalid_arguments return. refused is false for
// every other call.
func refuseMalformed(prep *Prepared, cs *CallState) (ret toolsets.Return, refused bool) {
	if len(cs.Arguments) == 0 || json.Valid(cs.Arguments) {
		return toolsets.Return{}, false
	}
	return prep.Registry.Refusal(toolsets.Invocation{CallID: cs.ID, Name: cs.Tool, Arguments: cs.Arguments})
}

// refuseInvalid returns the invalid_arguments return of a call whose
// arguments the registry refuses (a member named twice, a value the schema
// refuses), decided where the batch is scheduled, for a call the approval
// policy would stop (a person is never asked to approve a call that cannot
// run as shown) and for a call of a remote tool (ambiguous arguments never
// leave the node: a worker in another language may decode a member named
// twice as either value). A local call is refused the same way by the
// registry that runs it. Any other refusal (a tool the node's registry
// does not hold) is left to the call.
func refuseInvalid(prep *Prepared, cs *CallState) (ret toolsets.Return, refused bool) {
	ret, refused = prep.Registry.Refusal(toolsets.Invocation{CallID: cs.ID, Name: cs.Tool, Arguments: cs.Arguments})
	if !refused || ret.Kind != toolsets.KindInvalidArguments {
		return toolsets.Return{}, false
	}
	return ret, true
}

// reviewedArguments returns args as a pending item records them and as
// the approved (or resumed) call receives them: their canonical form
// (toolsets.CanonicalArguments), so the person deciding reads exactly what
// the tool gets. Arguments without one (refused before they could be
// pending) are kept as they are.
func reviewedArguments(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return args
	}
	c, err := toolsets.CanonicalArguments(args)
	if err != nil {
		return args
	}
	return c
}
