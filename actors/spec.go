package actors

import (
	"context"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// AgentSpec is everything the runtime needs to run an agent: its model, its
// tools and toolsets, instructions and policies. Agents are Go values
// registered on a Host by name; the session stream records the name.
type AgentSpec struct {
	// Name identifies the agent; it is recorded in run.started.
	Name string
	// Version identifies this declaration of the agent (empty: the agent
	// has one, registered once). Versions of one name coexist in a host:
	// new runs start with the latest, and a run is driven by the version
	// its run.started recorded (metadata MetaAgentVersion), so a reload
	// does not change the runs under way.
	Version string
	Model   llm.Model
	// Tools are loose tools (in no toolset).
	Tools []toolsets.Tool
	// Toolsets are prepared before every model request.
	Toolsets []toolsets.Toolset
	// Instructions are system instructions, before the toolsets'.
	Instructions []string
	// ApprovalRequired lists policy entries: a tool name, a toolset name or
	// id, a metadata bundle (Definition.Metadata["bundle"]), or "*",
	// matched by toolsets.Selector. A call matching one needs a human
	// approval before it runs, and its definition is marked
	// (toolsets.MetaApprovalRequired). An entry that matches nothing is
	// refused by Register when every toolset can be listed
	// (toolsets.KnownTools), and otherwise fails any preparation whose
	// inventory it does not match (FailPolicy).
	ApprovalRequired []string
	// Trusted lists entries (as for ApprovalRequired) selecting tools
	// whose own approval gate the agent opts out of — a toolset's
	// default, such as an MCP tool annotated destructive, or the writes
	// and commands of the environment toolsets: their calls run without a
	// person's approval, with an approval decided by the agent's policy
	// in ToolContext.Approval. ApprovalRequired still applies to them (an
	// explicit policy is never loosened). An entry that matches nothing is
	// refused as for ApprovalRequired.
	Trusted []string
	// Limits bound a run's usage.
	Limits Limits
	// MaxRetries is the default retry budget of tools that set none (nil:
	// toolsets.DefaultMaxRetries). It is both the registry's internal
	// budget and the run-level model-retry budget of those tools.
	MaxRetries *int
	// Timeout is the default per-attempt timeout of tools that set none.
	Timeout time.Duration
	// PrepareTimeout bounds one toolset's Prepare and Refresh when the
	// toolset carries no lifecycle policy of its own
	// (toolsets.WithLifecycle); default toolsets.DefaultReadTimeout.
	PrepareTimeout time.Duration
	// WorkspaceRoot, Environment and Resources are passed to the
	// toolsets in their ToolsetContext.
	WorkspaceRoot string
	Environment   any
	Resources     toolsets.Resources
	// Settings are the generation settings of every model request.
	Settings llm.Settings
	// OutputValidators check a final text output, in order. The first
	// that returns an error rejects it: the model gets a retry prompt with
	// the error's text (a toolsets.ModelRetry error's message as is). A
	// run whose outputs are rejected more than OutputRetries times fails
	// with output_retry_limit_exceeded.
	OutputValidators []OutputValidator
	// OutputRetries bounds the rejected outputs of a run (0: 2).
	OutputRetries int
	// ToolHooks are the agent's tool-execution hooks (toolsets.Hook):
	// around every call of its tools, outermost, in this process for
	// local and remote tools alike. See core_capability.go.
	ToolHooks []toolsets.Hook
	// RequestHooks see and may amend each model request before it is
	// sent; RunCompleteHooks see each final output. A failing one fails
	// the run with FailCapability. See core_capability.go.
	RequestHooks     []RequestHook
	RunCompleteHooks []RunCompleteHook

	// lifecycles drive Toolsets, one per toolset, built by Register.
	lifecycles []*toolsets.Lifecycle
	// approval is ApprovalRequired compiled by Register (nil: none).
	approval *approvalPolicy
}

// OutputValidator checks a run's final text output; an error rejects it.
// It runs on the goroutine that called the model, never in an actor.
type OutputValidator func(ctx context.Context, output string) error

// defaultOutputRetries is the rejected-output budget of a run when the
// agent sets none.
const defaultOutputRetries = 2

// Limits bound the usage of one run. A nil field means no limit; a
// field set to 0 allows none (a run with ToolCalls 0 may not call a tool).
type Limits struct {
	// Requests is the most model requests a run may make.
	Requests *int64
	// ToolCalls is the most tool calls a run may make; a batch that would
	// exceed it fails the run before any of its calls starts.
	ToolCalls *int64
	// InputTokens, OutputTokens and TotalTokens bound the tokens a run
	// may use; checked after every model response.
	InputTokens, OutputTokens, TotalTokens *int64
}

// exceeds reports whether n is above limit lim (never, without a limit).
func exceeds(n int64, lim *int64) bool { return lim != nil && n > *lim }

// DefaultPrepareTimeout bounds a toolset's Prepare when the agent sets none.
const DefaultPrepareTimeout = 30 * time.Second
