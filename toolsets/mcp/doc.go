// Package mcp connects weft agents to Model Context Protocol servers.
//
// A [Config] describes one server as the seed does: its name, a
// transport ([Stdio], [StreamableHTTP], or the legacy [SSE]), headers and
// environment values read from the process environment ([FromEnv]), a
// tool prefix, instructions rendered under the group "mcp:<server>", and
// declared tools, resources and prompts with their schemas and metadata.
//
// The same configuration gives two toolsets:
//
//   - [NewDeferred] is the seed's behaviour: the declared tools appear in
//     the model's tool list, and a call suspends the run with a deferred
//     request carrying the MCP request (server, transport kind, tool,
//     arguments; never a header, an environment value or a URL), for the
//     host to complete with weft.Complete or fail with weft.Fail.
//   - [New] is live mode on the official Go SDK: a dynamic toolset that
//     opens an MCP session when a run enters it (or once per process with
//     [Config.Shared]), lists the server's tools (or offers the declared
//     ones), calls them under the tool's timeout and cancellation, forwards
//     progress notifications as tool.progress events, and closes the
//     session when the run exits. Progress is best effort at the end of a
//     call: the SDK hands notifications over on goroutines of their own,
//     so the last ones may come after the result; a call that reported
//     progress waits a little for them, and any later are dropped.
//
// # Failure rules (live mode)
//
//   - Every request has a deadline: a call the tool's timeout (or
//     [Config.CallTimeout] when no tool, toolset or agent timeout is set),
//     every other request (initialize, tools/list) [Config.RequestTimeout].
//   - A call whose connection is lost is never sent again unless the tool
//     is annotated readOnlyHint or idempotentHint. Such an uncertain call
//     returns a failed result (kind execution, never retried) that says it
//     may or may not have run. The next call or preparation reconnects and
//     lists the tools again.
//   - A call that cannot be sent at all (the server cannot be reached) is
//     an execution error: it did not run, so the registry may retry it.
//   - Calls are independent: one failing call never cancels another.
//   - A server that fails to start or to initialize makes the toolset
//     unavailable (toolsets.ErrUnavailable) under the lifecycle policy; the
//     error, and so the toolset.unavailable event, carries the tail of the
//     server's standard error.
//   - Header and environment values, and a URL's password and query
//     values, never appear in an error, an event or a log line: every
//     message this package returns is scrubbed of them. A stdio server
//     inherits only [InheritedEnv] from weft's environment.
//   - A server's elicitation (an input-required result of the multi
//     round-trip protocol, MCP 2026-07-28) becomes weft's
//     [toolsets.ElicitationRequired]: the run waits with the question and
//     its requested schema in the HITL queue, and once a person answers
//     (weft.Answer, from any node, or after a restart: the server's
//     request state is kept in the log) the call is sent again with the
//     answer and the state. Other input requests (sampling, roots, several
//     at once) are not answered: the call fails with a result that says
//     so, and is not sent again. A server on an older protocol, which
//     would ask with an elicitation/create request inside the call, is
//     not told that weft can answer (no elicitation capability), because
//     such a question could not outlive the connection.
//
// # Annotations
//
// Annotations only tighten weft's policy. A tool whose readOnlyHint is
// true is concurrency-safe (unless declared Sequential). A tool whose
// destructiveHint is true, or unset while readOnlyHint is false (the
// spec's default), needs approval before it runs, unless the toolset is
// built with [Config.TrustDestructive]; an agent's approval policy applies
// on top and is never loosened by an annotation. A declared tool's
// annotations and the server's are combined: a hint that allows more
// (readOnly, idempotent) holds only when every source says so, a hint that
// restricts (destructive) holds when any source says so.
package mcp
