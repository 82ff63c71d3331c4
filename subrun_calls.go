package weft

import (
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/toolsets"
)

// Which calls of a parent run are sub-runs is decided by what the calls
// are, never by the names they were called by: the toolset wrappers
// (toolsets.Prefixed, toolsets.Renamed, …) offer a tool under another
// name, and an agent tool offered so must neither escape its fan-out
// limit nor leave its children running when the parent ends. Where the
// answer is uncertain, the call is taken for a sub-run: a limit or a
// cancellation errs on the side of applying.

// metaAgentTool is the definition metadata that marks an agent tool
// (AgentTool); its value is the agent's name.
const metaAgentTool = "weft.agent_tool"

// isAgentTool reports whether name resolves to an agent tool in reg, the
// registry of the parent's current step: a tool that is an agent tool
// beneath its wrappers (toolsets.Find), or whose definition carries the
// mark (a wrapper that re-describes a tool may drop the mark, never what
// the tool is). Without a registry (the run's calls do not execute in
// this process) every name counts as one.
func isAgentTool(reg *toolsets.Registry, name string) bool {
	if reg == nil {
		return true
	}
	t, ok := reg.Tool(name)
	if !ok {
		return false
	}
	if _, is := toolsets.Find[*agentTool](t); is {
		return true
	}
	_, marked := t.Definition().Metadata[metaAgentTool]
	return marked
}

// fanOutPosition returns the position (from 1) of call among the calls of
// batch that agent reports as calls of agent tools, in model order, and
// whether call is in batch; a call not in batch comes after them all.
func fanOutPosition(batch []actors.BatchCall, call string, agent func(tool string) bool) (int, bool) {
	n := 0
	for _, c := range batch {
		if agent(c.Tool) {
			n++
		}
		if c.ID == call {
			return n, true
		}
	}
	return n + 1, false
}

// fanOutInSession returns the position (from 1) of call among the calls
// of agent tools in the current response of run, read from the parent's
// session st: the calls the model made and those its programs made (code
// mode: recorded in the run's batch with the code call as parent), in the
// order they were recorded. A run the session does not have cannot place
// the call, so the call is refused with an error rather than counted
// first: the limit fails closed.
func fanOutInSession(st *actors.SessionState, run, call string, agent func(tool string) bool) (int, error) {
	r := st.Runs[run]
	if r == nil {
		return 0, fmt.Errorf("the parent run %q is not in session %q: its fan-out cannot be counted", run, st.SessionID)
	}
	batch := make([]actors.BatchCall, len(r.Batch))
	for i, c := range r.Batch {
		batch[i] = actors.BatchCall{ID: c.ID, Tool: c.Tool}
	}
	n, _ := fanOutPosition(batch, call, agent)
	return n, nil
}

// mayHaveChild returns the ids of the calls of run r's current batch that
// may have started a child run still going: the calls with no return yet
// (in flight when the run ended), those whose return was cancelled (a
// cancelled call's return no longer names its child) and those that wait
// for a sub-run (MetaSubrun). The children's ids derive from the calls
// (childIDs), whatever the tools were called. A call with a final return
// of another kind started no child, or its child has ended; one that
// waits for a person has not run.
func mayHaveChild(r *actors.RunState) []string {
	var ids []string
	for _, c := range r.Batch {
		switch {
		case c.Return == nil, c.Return.Kind == toolsets.KindCancelled:
		case c.Return.Control != nil && c.Pending != "":
			if _, ok := subrunOf(c.Return.Control.Metadata); !ok {
				continue
			}
		default:
			continue
		}
		ids = append(ids, c.ID)
	}
	return ids
}
