package telemetry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Span and trace ids are derived from what the log names (session, run,
// call and the like), so that every node computes the same ids for the
// same span: the node that carries a session on after a takeover ends the
// run span the first node began, and a remote call's traceparent names the
// execute_tool span before it is built.

// derive returns 16 bytes derived from parts.
func derive(parts ...string) [16]byte {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	if out == [16]byte{} {
		out[15] = 1
	}
	return out
}

// spanID derives a span id from parts.
func spanID(parts ...string) trace.SpanID {
	d := derive(parts...)
	var id trace.SpanID
	copy(id[:], d[:8])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// traceID derives a trace id from parts.
func traceID(parts ...string) trace.TraceID {
	return trace.TraceID(derive(parts...))
}

// newTraceID returns a random trace id.
func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		_, _ = rand.Read(id[:])
	}
	return id
}

type idsKey struct{}

type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs asks the id generator for these ids for the span started with
// ctx.
func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, wantIDs{t, s})
}

// idGenerator hands out the ids withIDs put in the context, else random
// ones.
type idGenerator struct{}

var _ sdktrace.IDGenerator = idGenerator{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if w, ok := ctx.Value(idsKey{}).(wantIDs); ok && w.trace.IsValid() && w.span.IsValid() {
		return w.trace, w.span
	}
	var s trace.SpanID
	for !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return newTraceID(), s
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if w, ok := ctx.Value(idsKey{}).(wantIDs); ok && w.span.IsValid() {
		return w.span
	}
	var s trace.SpanID
	for !s.IsValid() {
		_, _ = rand.Read(s[:])
	}
	return s
}
