package actors

import (
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// MetaHandoff is the return-metadata key of a handoff tool's success
// (weft.Handoff): the agent the run is handed to. The tool must be named
// HandoffToolPrefix + that agent's name.
const MetaHandoff = "weft.handoff"

// HandoffToolPrefix begins the name of a handoff tool.
const HandoffToolPrefix = "transfer_to_"

// handoffTo returns the agent the last batch of r hands the run to, ""
// when none: the first successful return of a handoff tool whose name
// names the agent of its metadata, unless the run is that agent's
// already (the handoff was recorded).
func handoffTo(r *RunState) string {
	for _, c := range r.Batch {
		ret := c.Return
		if ret == nil || ret.Kind != toolsets.KindSuccess {
			continue
		}
		to, _ := ret.Metadata[MetaHandoff].(string)
		if to == "" || ret.ToolName != HandoffToolPrefix+to {
			continue
		}
		if to == r.Agent {
			return ""
		}
		return to
	}
	return ""
}

// handoff records run.handoff: the run goes on with the other agent (the
// shell builds its facts again for the new agent's tools, and the next
// model request is that agent's). An agent this host does not know fails
// the run.
func (k core) handoff(r *RunState) decision {
	to := handoffTo(r)
	spec, ok := k.look.Agent(to)
	if !ok {
		return k.fail(r, FailInternal, fmt.Sprintf("handoff to agent %q, which is not registered", to))
	}
	var call string
	for _, c := range r.Batch {
		if c.Return != nil && c.Return.ToolName == HandoffToolPrefix+to {
			call = c.ID
			break
		}
	}
	rec := newRecord(events.TypeRunHandoff, k.session, r.ID, "", events.RunHandoff{From: r.Agent, To: to, ToolCallID: call, Version: spec.Version})
	return decision{recs: []record{rec}, split: true, carryOn: true}
}
