package worker

import (
	"context"
	"net/http"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-run/weft/protocol"
)

// WithTracerProvider makes a span of each call the worker executes,
// "execute_tool {tool}" (kind server), a child of the node's span for the
// call when the delivery carries a traceparent header (a node with
// telemetry sends one). The tool's context carries the span.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(w *Worker) {
		if tp != nil {
			w.tracer = tp.Tracer("github.com/weft-run/weft/worker")
		}
	}
}

// startSpan starts the span of req, its parent read from h; end ends it
// with the call's return.
func (w *Worker) startSpan(ctx context.Context, h nats.Header, req protocol.ToolRequest) (context.Context, func(protocol.ToolReport)) {
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(http.Header(h)))
	ctx, sp := w.tracer.Start(ctx, "execute_tool "+req.Name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", req.Name),
		attribute.String("gen_ai.tool.call.id", req.CallID), attribute.String("gen_ai.tool.type", "function"),
		attribute.String("weft.worker.id", w.id)))
	return ctx, func(r protocol.ToolReport) {
		if r.Return != nil && r.Return.IsError {
			sp.SetAttributes(attribute.String("error.type", string(r.Return.Kind)))
			sp.SetStatus(codes.Error, string(r.Return.Kind))
		}
		sp.End()
	}
}
