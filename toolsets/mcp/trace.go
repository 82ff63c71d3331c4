package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceCall starts the span of a live call, "tools/call {tool}" (the MCP
// semantic conventions), when ctx carries a span (telemetry's
// execute_tool span, or a worker's), and puts its traceparent into the
// request's _meta for the server. end ends it with the call's outcome.
func traceCall(ctx context.Context, tool string, params *sdk.CallToolParams) (context.Context, func(res *sdk.CallToolResult, err error)) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, func(*sdk.CallToolResult, error) {}
	}
	ctx, sp := parent.TracerProvider().Tracer("github.com/weft-run/weft/toolsets/mcp").Start(ctx, "tools/call "+tool,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tool),
			attribute.String("gen_ai.operation.name", "execute_tool")))
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if tp := carrier["traceparent"]; tp != "" {
		if params.Meta == nil {
			params.Meta = sdk.Meta{}
		}
		params.Meta["traceparent"] = tp
	}
	return ctx, func(res *sdk.CallToolResult, err error) {
		switch {
		case err != nil:
			sp.SetAttributes(attribute.String("error.type", "_OTHER"))
			sp.SetStatus(codes.Error, "the call failed")
		case res != nil && res.IsError:
			sp.SetAttributes(attribute.String("error.type", "tool_error"))
			sp.SetStatus(codes.Error, "the tool returned an error")
		}
		sp.End()
	}
}
