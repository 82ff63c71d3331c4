package weft

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/toolsets"
)

// Default sub-run limits of an agent tool (AgentTool).
const (
	// DefaultMaxDepth is how deep sub-runs may nest under a root run.
	DefaultMaxDepth = 3
	// DefaultMaxFanOut is how many sub-runs one model response may start.
	DefaultMaxFanOut = 8
)

// MetaSubrun is the key of the deferred-call metadata that names the
// child run a parent's call waits for: {"session_id", "run_id", "agent",
// "depth"} (an actors.SubrunRef). The HITL queue shows such an item as
// waiting for the sub-run.
const MetaSubrun = actors.MetaSubrun

// subrunBy is who settles a parent's call when its child ends (the By of
// the deferred.resolved event).
const subrunBy = "weft.child_ended"

// AgentToolOption configures AgentTool.
type AgentToolOption func(*agentToolConfig)

type agentToolConfig struct {
	name, description   string
	maxDepth, maxFanOut int
}

// WithMaxDepth bounds how deep sub-runs of this tool may nest under the
// root run (a child of a root run has depth 1); default DefaultMaxDepth.
func WithMaxDepth(n int) AgentToolOption { return func(c *agentToolConfig) { c.maxDepth = n } }

// WithMaxFanOut bounds how many calls of agent tools one model response
// of the parent may make that start sub-runs; default DefaultMaxFanOut.
// The calls past the limit (in model order) are refused. The calls a
// program makes (code mode) are calls of the response that ran it: they
// count with the model's own, in the order they were made, even though a
// program's calls run one after another, each child ending before the
// next starts. So a response starts at most the limit of sub-runs,
// however it makes them, and a program cannot loop past the limit.
func WithMaxFanOut(n int) AgentToolOption { return func(c *agentToolConfig) { c.maxFanOut = n } }

// WithToolName names the tool (default: the agent's name).
func WithToolName(name string) AgentToolOption { return func(c *agentToolConfig) { c.name = name } }

// WithToolDescription describes the tool to the model.
func WithToolDescription(d string) AgentToolOption {
	return func(c *agentToolConfig) { c.description = d }
}

// SubrunLimitError refuses a call of an agent tool that would nest
// sub-runs deeper than its depth limit or start more of them from one
// model response than its fan-out limit. It is a user error: the model
// sees its message and the run goes on.
type SubrunLimitError struct {
	// Agent is the agent the call would have started.
	Agent string
	// Limit is "depth" or "fan_out".
	Limit string
	// Max is the limit; Got is what the call would have reached.
	Max, Got int
}

func (e *SubrunLimitError) Error() string {
	if e.Limit == "depth" {
		return fmt.Sprintf("agent %q was not called: a sub-run at depth %d would exceed the depth limit of %d; answer without delegating further", e.Agent, e.Got, e.Max)
	}
	return fmt.Sprintf("agent %q was not called: sub-run %d of this response exceeds the fan-out limit of %d; call fewer agents at once", e.Agent, e.Got, e.Max)
}

// Unwrap makes the error a toolsets.UserError for the registry.
func (e *SubrunLimitError) Unwrap() error { return &toolsets.UserError{Message: e.Error()} }

type agentToolArgs struct {
	Prompt string `json:"prompt" jsonschema:"the task for the agent, with everything it needs to know"`
}

// AgentTool makes agent a tool of other agents: a call starts a child run
// of agent, with the call's prompt, in a child session of its own
// (derived from the parent's session, run and call, so a call run again
// starts no other child). The child's run.started names the parent
// session, run and call and its depth. The parent's call waits as a
// deferred call does (its run records run.waiting, and nothing waits in
// memory): when the child ends, its output (or a typed failure) becomes
// the call's return, and the parent resumes once all its waiting sub-runs
// have ended. The child's own approvals and deferred calls wait in the
// child's session (the HITL queue shows them with their parent chain);
// deciding them resumes the child, whose end resumes the parent, in this
// process or after a restart (Recover) or on another node.
//
// Calls of one response run in parallel. Cancelling the parent cancels
// its children; Recover cancels children whose parent has ended. Depth
// and fan-out beyond the limits refuse the call with a *SubrunLimitError.
// The limits and the cancellation hold under any name the toolset
// wrappers (toolsets.Prefixed, toolsets.Renamed, …) offer the tool by:
// the runtime knows an agent tool by what it is, not by its name.
// agent must be registered on the runtime the calling agent runs on.
func AgentTool(agent *Agent, opts ...AgentToolOption) (toolsets.Tool, error) {
	if agent == nil {
		return nil, fmt.Errorf("weft: agent tool: %w: nil agent", toolsets.ErrInvalidDefinition)
	}
	c := agentToolConfig{name: agent.Name(), maxDepth: DefaultMaxDepth, maxFanOut: DefaultMaxFanOut,
		description: fmt.Sprintf("Delegate a task to the agent %q and get its final answer.", agent.Name())}
	for _, o := range opts {
		o(&c)
	}
	if c.maxDepth < 1 || c.maxFanOut < 1 {
		return nil, fmt.Errorf("weft: agent tool %q: %w: limits must be at least 1", c.name, toolsets.ErrInvalidDefinition)
	}
	at := &agentTool{agent: agent, cfg: c}
	t, err := toolsets.NewContextFunc(c.name, at.call, toolsets.WithDescription(c.description), toolsets.WithConcurrentSafe(true),
		toolsets.WithMaxRetries(0), toolsets.WithMetadata(map[string]any{metaAgentTool: agent.Name()}))
	if err != nil {
		return nil, fmt.Errorf("weft: agent tool: %w", err)
	}
	at.Tool = t
	agent.rt.subs() // hears the ends of sub-runs from now on
	return at, nil
}

// agentTool is the tool AgentTool returns: the function tool that calls
// the agent, embedded so that the runtime knows an agent tool by what it
// is (toolsets.Find) under any name the toolset wrappers give it.
type agentTool struct {
	toolsets.Tool
	agent *Agent
	cfg   agentToolConfig
}

// call starts the child run and defers the call until it ends.
func (at *agentTool) call(ctx context.Context, tc *toolsets.ToolContext, a agentToolArgs) (any, error) {
	rt := at.agent.rt
	pv, _ := tc.Metadata(actors.MetaParent)
	parent := actors.ParentFrom(pv)
	depth := parent.Depth + 1
	if depth > at.cfg.maxDepth {
		return nil, &SubrunLimitError{Agent: at.agent.Name(), Limit: "depth", Max: at.cfg.maxDepth, Got: depth}
	}
	if n, err := rt.subs().fanOutIndex(ctx, tc.SessionID, tc.RunID, tc.CallID); err != nil {
		return nil, err
	} else if n > at.cfg.maxFanOut {
		return nil, &SubrunLimitError{Agent: at.agent.Name(), Limit: "fan_out", Max: at.cfg.maxFanOut, Got: n}
	}
	child, runID := childIDs(tc.SessionID, tc.RunID, tc.CallID)
	ref := actors.ParentRef{SessionID: tc.SessionID, RunID: tc.RunID, ToolCallID: tc.CallID, Depth: depth}
	md := map[string]any{actors.MetaParent: metaValue(ref)}
	if _, err := at.agent.Session(child).Start(ctx, a.Prompt, WithRunID(runID), WithMetadata(md)); err != nil {
		return nil, fmt.Errorf("start the sub-run of agent %q: %w", at.agent.Name(), err)
	}
	return nil, toolsets.CallDeferred("sub-run of agent "+at.agent.Name(), map[string]any{
		MetaSubrun: metaValue(actors.SubrunRef{SessionID: child, RunID: runID, Agent: at.agent.Name(), Depth: depth}),
	})
}

// metaValue returns ref, a typed metadata value (actors.ParentRef,
// actors.SubrunRef), as the map it encodes to, so that the struct's tags
// are the one spelling of its keys. The map, not the struct, is what is
// recorded: a map's keys encode sorted, a struct's in field order, and
// the events recorded so far have them sorted.
func metaValue(ref any) map[string]any {
	b, _ := json.Marshal(ref) // strings and ints: it cannot fail
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// subrunNamespace derives the ids of child sessions and runs.
var subrunNamespace = uuid.MustParse("6f1c1d1e-5b8a-4f1e-9a63-2b7d0c4e8a10")

// childIDs returns the session and run ids of the child of a parent's
// call: the same for the same call, so that a call run again (after a
// restart) starts no second child.
func childIDs(session, run, call string) (string, string) {
	key := session + "\x00" + run + "\x00" + call
	return uuid.NewSHA1(subrunNamespace, []byte("session\x00"+key)).String(), uuid.NewSHA1(subrunNamespace, []byte("run\x00"+key)).String()
}
