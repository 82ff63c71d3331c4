package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weft-run/weft/actors"
)

// ToolContext gives a local tool call's context the call's execute_tool
// span (its derived id: the span itself is built when the call returns)
// and this Telemetry's tracer provider, so that what the tool does
// nests under it: an MCP toolset's "tools/call {tool}" span.
func (t *Telemetry) ToolContext(ctx context.Context, call actors.ToolRequest) context.Context {
	t.mu.Lock()
	sc, ok := t.track.remoteParent(call.SessionID, call.RunID, call.CallID)
	t.mu.Unlock()
	if !ok {
		return ctx
	}
	return trace.ContextWithSpan(ctx, parentSpan{sc: sc, tp: t.tp})
}

// parentSpan stands for a span built later: its context and provider only.
type parentSpan struct {
	noop.Span
	sc trace.SpanContext
	tp trace.TracerProvider
}

func (p parentSpan) SpanContext() trace.SpanContext       { return p.sc }
func (p parentSpan) TracerProvider() trace.TracerProvider { return p.tp }
