package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
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

// callSpan returns the execute_tool span context of a call of a parent
// run in an open segment (the call itself may not be in the log yet: a
// call approved and run again records its tool.started as it starts),
// false for a run this process does not follow. A parent session this process has not read yet (a
// call run again after a restart before anything of its session was
// appended here) is read from the log.
func (t *Telemetry) callSpan(p actors.ParentRef) (trace.SpanContext, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.SessionID == "" {
		return trace.SpanContext{}, false
	}
	if !t.seen[p.SessionID] {
		if v := t.readLog(p.SessionID, events.SessionStream(p.SessionID), 0); v > 0 {
			t.read[p.SessionID] = v
		}
	}
	r := t.track.runs[runID{p.SessionID, p.RunID}]
	if r == nil || !r.open || p.ToolCallID == "" {
		return trace.SpanContext{}, false
	}
	return t.track.remoteParent(p.SessionID, p.RunID, p.ToolCallID)
}
