package actors

import (
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// AgentSpec is everything the runtime needs to run an agent: its model, its
// tools and toolsets, instructions and policies. Agents are Go values
// registered on a Host by name; the session stream records the name.
type AgentSpec struct {
	// Name identifies the agent; it is recorded in run.started.
	Name  string
	Model llm.Model
	// Tools are loose tools (in no toolset).
	Tools []toolsets.Tool
	// Toolsets are prepared before every model request.
	Toolsets []toolsets.Toolset
	// Instructions are system instructions, before the toolsets'.
	Instructions []string
	// ApprovalRequired lists policy entries: a tool name, a toolset name or
	// id, a metadata bundle (Definition.Metadata["bundle"]), or "*". A call
	// matching one needs a human approval before it runs.
	ApprovalRequired []string
	// Limits bound a run's usage.
	Limits Limits
	// MaxRetries is the default retry budget of tools that set none (nil:
	// toolsets.DefaultMaxRetries). It is both the registry's internal
	// budget and the run-level model-retry budget of those tools.
	MaxRetries *int
	// Timeout is the default per-attempt timeout of tools that set none.
	Timeout time.Duration
	// PrepareTimeout bounds one toolset's Prepare (default 30s).
	PrepareTimeout time.Duration
}

// Limits bound the usage of one run. Zero means no limit.
type Limits struct {
	// Requests is the most model requests a run may make.
	Requests int
	// ToolCalls is the most tool calls a run may make; a batch that would
	// exceed it fails the run before any of its calls starts.
	ToolCalls int
	// InputTokens, OutputTokens and TotalTokens bound the tokens a run
	// may use; checked after every model response.
	InputTokens, OutputTokens, TotalTokens int64
}

// DefaultPrepareTimeout bounds a toolset's Prepare when the agent sets none.
const DefaultPrepareTimeout = 30 * time.Second
