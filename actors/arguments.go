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
