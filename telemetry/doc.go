// Package telemetry gives a weft runtime OpenTelemetry traces and metrics
// that follow the GenAI semantic conventions (keys.go names the version).
//
// A *Telemetry is a weft.Observer (weft.Config.Observer): it derives its
// spans and metrics from the events a session appends, as they are
// appended, so that they say what the log says. Spans are built when they
// end, with the start and end times of their events, and their ids are
// derived from the log (session, run, call), so every node computes the
// same ones: a node that takes a session over continues its trace, and a
// remote call's traceparent header names the execute_tool span before it
// exists.
//
// The spans:
//   - invoke_agent {agent}: a run, from run.started (or run.resumed) to
//     its settling. Its parent is the trace context recorded in
//     run.started's metadata under "weft.trace" (the caller's span of the
//     Start, e.g. a POST /v1/runs with a traceparent header; for a sub-run,
//     the execute_tool span of the parent's call that started it). The work
//     after a HITL wait is a new trace whose run span links to the span of
//     the segment that waited.
//   - chat {model}: a model request, from model.request to model.response.
//   - execute_tool {tool}: a tool call, from its first tool.started to
//     tool.returned; each retry is a span event, and so is a start of
//     the same attempt again (restarted: the run was carried on after a
//     restart or a takeover).
//   - execute_tool {tool} on a remote worker (worker.WithTracerProvider),
//     a child of the node's span through the traceparent NATS header.
//   - tools/call {tool}: a live MCP call (toolsets/mcp), under its
//     execute_tool span (ToolContext), its traceparent in the request's
//     _meta.
//
// Content (arguments, results, messages) is recorded only with
// Config.RecordContent.
//
// Metrics are exported as Prometheus text by Handler (GET /metrics) and
// over OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_* variables are set
// (FromEnv); nothing leaves the process otherwise.
package telemetry
