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
// within the call's budget.
//
// # Toolsets
//
// A [Toolset] groups tools and instructions. [New] builds a static one,
// [NewFunction] a function toolset whose defaults apply to the tools added
// with [Add] and [AddPlain]. The interface has a single Prepare method so
// that dynamic toolsets (lifecycle hooks, per-run inventories) and wrappers
// can be added later as optional interfaces and decorators.
//
// # Registry
//
// A [Registry] holds tools, validates arguments against schemas compiled
// at registration, and runs calls with per-attempt timeouts, cooperative
// cancellation and an internal retry budget; see its documentation for
// the exact rules.
package toolsets
