package weft

import (
	"context"
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/toolsets"
)

type handoffArgs struct {
	Reason string `json:"reason,omitempty" jsonschema:"why the conversation goes to this agent"`
}

// Handoff returns the tool transfer_to_<agent's name>, which lets the
// model hand the rest of the run over to agent: once the calls of the
// response that called it have returned, the run records run.handoff
// {from, to} and goes on with agent's model, instructions and tools, on
// the same conversation. Give it to the agents that may hand over (a
// handoff is optional per agent). agent must be registered on the same
// runtime. The previous agent's toolsets are exited at the handoff.
func Handoff(agent *Agent) (toolsets.Tool, error) {
	if agent == nil {
		return nil, fmt.Errorf("weft: handoff: %w: nil agent", toolsets.ErrInvalidDefinition)
	}
	name := agent.Name()
	t, err := toolsets.NewFunc(actors.HandoffToolPrefix+name, func(_ context.Context, a handoffArgs) (toolsets.Result, error) {
		msg := fmt.Sprintf("Transferred to agent %q: it carries on the conversation.", name)
		return toolsets.Result{Content: msg, Metadata: map[string]any{actors.MetaHandoff: name}}, nil
	}, toolsets.WithDescription(fmt.Sprintf("Hand the rest of this conversation over to the agent %q.", name)), toolsets.WithMaxRetries(0))
	if err != nil {
		return nil, fmt.Errorf("weft: handoff: %w", err)
	}
	return t, nil
}
