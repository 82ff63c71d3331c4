// Package mcpserve serves the tools of a weft agent over the Model Context
// Protocol (MCP), with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): over stdio (Server.ServeStdio)
// or streamable HTTP (Server.Handler, with an optional bearer token).
//
// Every tools/call runs as a run of its own weft session, on the agent's
// tools and toolsets: the registry validates the arguments against the
// tool's schema and applies its timeout and retry budget, the approval
// policy applies, and every call is in the event log like any run's
// (run.started records the MCP call as its input: {"tool","arguments"}).
// The agent's model is not a language model but the MCP client: a model
// that asks for exactly the call it was given and ends the run when the
// call has returned.
//
// The tool list (tools/list) is the agent's tools with their inferred JSON
// Schemas (inputSchema), descriptions and annotations derived from the
// tool flags: a concurrency-safe tool is idempotentHint (it only reads or
// is idempotent; see toolsets.Definition.ConcurrentSafe); a tool the
// approval policy gates is destructiveHint; a tool whose metadata says
// "read_only": true is readOnlyHint; "title" in the metadata is the
// title. Annotations are hints for the client, never weft's policy.
//
// # Approvals
//
// A call that needs a person's approval does not wait inside the MCP
// request (which a client would time out): its run waits in the HITL
// queue like any other (weft pending, weft approve), and the call answers
// at once with an error result (isError) whose text says the approval is
// pending and whose structuredContent is {"status":"approval_pending",
// "session_id","run_id","call_id"}. When the client calls the same tool
// with the same arguments again, the answer is that run's: still pending,
// or, once decided, the tool's return (approved) or the denial (denied).
// A deferred call is answered the same way, with "deferred_pending".
// The pending calls are kept by the server in memory, per MCP session: a
// client that reconnects (a new MCP session) or a restarted server asks
// for a new approval.
//
// # Results
//
// A call's result is the tool's model-facing return (its content, or its
// model content when it gave one), as text content: a JSON string as its
// text, any other JSON value as its JSON text, which is also the
// structuredContent when it is an object. A return that is not a success
// (invalid arguments, a failure, a denial) has isError set. The app, user
// and private surfaces of the return never leave weft.
package mcpserve
