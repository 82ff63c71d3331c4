package agentspec

import (
	"fmt"
	"strings"

	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/toolsets"
)

// agentToolOrder checks the agent_tools of every agent (declared, not the
// agent itself, no cycle) and returns the order to register the agents
// in: every agent after the agents it calls as tools, else in file order.
// A refusal is at the agent_tools entry that closes the cycle or names an
// undeclared agent.
func (f *File) agentToolOrder() ([]int, error) {
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(f.Agents))
	order := make([]int, 0, len(f.Agents))
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		state[i] = visiting
		path = append(path, f.Agents[i].Name)
		for j, name := range f.Agents[i].AgentTools {
			at := fmt.Sprintf("agents[%d].agent_tools[%d]", i, j)
			k := f.agent(name)
			switch {
			case k < 0:
				return f.errAt(at, "agent %q is not declared in this file", name)
			case k == i:
				return f.errAt(at, "agent %q cannot call itself as a tool", name)
			case state[k] == visiting:
				return f.errAt(at, "agent tools form a cycle: %s -> %s", strings.Join(path, " -> "), name)
			case state[k] == unseen:
				if err := visit(k, path); err != nil {
					return err
				}
			}
		}
		state[i] = done
		order = append(order, i)
		return nil
	}
	for i := range f.Agents {
		if state[i] == unseen {
			if err := visit(i, nil); err != nil {
				return nil, err
			}
		}
	}
	return order, nil
}

// agentTools returns the agent tools of agent i, built from the agents h
// has registered (every one it calls, by agentToolOrder).
func (f *File) agentTools(i int, h *Hosted) ([]toolsets.Tool, error) {
	var out []toolsets.Tool
	for j, name := range f.Agents[i].AgentTools {
		a := h.Agent(name)
		if a == nil {
			return nil, f.errAt(fmt.Sprintf("agents[%d].agent_tools[%d]", i, j), "agent %q is not registered yet", name)
		}
		t, err := weft.AgentTool(a)
		if err != nil {
			return nil, &Error{File: f.name, Line: f.line(fmt.Sprintf("agents[%d].agent_tools[%d]", i, j)), Field: fmt.Sprintf("agents[%d].agent_tools[%d]", i, j), Msg: "build the agent tool", Err: err}
		}
		out = append(out, t)
	}
	return out, nil
}
