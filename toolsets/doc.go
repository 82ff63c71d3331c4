// Package toolsets is weft's tool system: tool definitions and their
// JSON Schemas, typed tools built from Go functions, the tool context,
// control-flow errors, structured results, toolsets, and the registry that
// executes a call and turns every outcome into one canonical [Return].
//
// # Tools
//
// A [Tool] is a definition plus a Call method; any Go type implementing it
// is a "class tool". [NewFunc] and [NewContextFunc] build tools from typed
// functions and infer the parameters schema from the argument struct with
// github.com/google/jsonschema-go:
//
//	type TicketArgs struct {
//		TicketID       string `json:"ticket_id" jsonschema:"the ticket to fetch"`
//		IncludeHistory bool   `json:"include_history,omitempty"`
//	}
//	fetch, err := toolsets.NewFunc("fetch_ticket", func(ctx context.Context, a TicketArgs) (Ticket, error) { … })
//
// Explicit schemas ([WithSchema]) are checked when the tool is built and
// again when it is registered (see [SchemaRule]).
//
// # Outcomes
//
// A tool steers the runtime with the control-flow errors ([ModelRetry],
// [Feedback], [ApprovalRequired], [CallDeferred], [NewUserError],
// [InvalidArguments], …). [KindOf] maps an error to its [Kind], and
// [Kind.Flags] gives the fixed flags of each kind. Any other error, and a
// recovered panic, is an Execution failure that the registry retries
// within the call's budget; it is the only kind retried internally. An
// error returned after the attempt's context ended is a timeout or a
// cancellation instead, never retried. A [Result] marked Failed reports a
// failure with its payload, not retried. The tool reads its internal
// attempt ([ToolContext.Attempt]) and the run's model retries of it
// ([ToolContext.ModelRetries]) in its [ToolContext].
//
// # Hooks and argument validators
//
// A [Hook] runs around every call of the tools it applies to: registered
// on the registry ([WithHooks], the agent's), a toolset ([HookToolset]) or
// a tool ([HookTool]), once per call around its internal retries. Hooks
// may rewrite arguments and successful returns, refuse calls, but never
// change a return's control flow; what they did is recorded in
// [Return.Hooks] as digests. [ValidateArguments] adds validators that run
// after the schema, in order.
//
// # Toolsets
//
// A [Toolset] groups tools and instructions. [New] builds a static one,
// [NewFunction] a function toolset whose defaults apply to the tools added
// with [Add] and [AddPlain], [NewDynamic] one whose inventory is computed
// from the [ToolsetContext], and [NewFactory] one built by a function per
// step or per run. Lifecycle hooks are optional interfaces ([Enterer],
// [Refresher], [Exiter]); a preparation may hold other toolsets, which
// [Resolve] flattens. Wrappers are decorators chainable on every kind
// ([Wrap], [Prefixed], [Filtered], [Renamed], [Annotated], [Prepared],
// [RequireApproval], [Defer], [WithLifecycle]); a wrapper that changes
// what the model sees derives its own identity (see [Wrapped]).
//
// # Approval and deferral selectors
//
// [RequireApproval], [Defer] and an agent's approval policy choose tools
// through one [Selector]: a tool name, a toolset name or id
// ([Identities]), a bundle ([Bundles]) or [AllTools]. An entry that
// matches nothing is an error ([ErrUnmatchedSelector]), checked when the
// toolset is prepared and, for toolsets that can be listed without a run
// ([KnownTools]), when the agent is built. Gated definitions carry
// [MetaApprovalRequired] or [MetaDeferredCall] ([GatingOf]).
//
// # Driving toolsets through a run
//
// A runtime keeps one [Lifecycle] per attached toolset and calls
// [Lifecycle.Prepare] at every step of a run (it enters the toolset on the
// first, refreshes on later ones, under the [LifecyclePolicy] timeouts) and
// [Lifecycle.Exit] when the run ends; each call returns a
// [LifecycleReport] to log as a toolset.{state} event, and an error when
// the run must fail.
//
// # Libraries, search and proxy
//
// A [Library] holds toolsets that the model does not see directly.
// [NewSearch] exposes one search tool that loads matching tools for the
// session's next step; [NewProxy] exposes a fixed search tool and call
// tool. Both keep per-session [SearchState] (export and restore it with
// the session) and report [SearchRecord]s for tool_search.* events.
// [ValidateIDs] and [ValidateForDurability] check toolset identities
// without preparing them.
//
// # Registry
//
// A [Registry] holds tools, validates arguments against schemas compiled
// at registration, and runs calls with per-attempt timeouts, cooperative
// cancellation and an internal retry budget; see its documentation for
// the exact rules.
package toolsets
