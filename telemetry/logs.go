package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler wraps h so that a run's log lines carry its trace: a record
// whose context holds a span gets that span's trace_id and span_id; one
// with a "session" attribute naming a session with an open run (the
// runtime's lines) gets the run span's. Sessions' open runs are followed
// from the first LogHandler on (a run open before it is found from its
// next event).
func (t *Telemetry) LogHandler(h slog.Handler) slog.Handler {
	t.logs.Store(true)
	return &logHandler{h: h, t: t}
}

type logHandler struct {
	h       slog.Handler
	t       *Telemetry
	session string // a "session" attribute given by WithAttrs
}

func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		session := l.session
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "session" {
				session = a.Value.String()
				return false
			}
			return true
		})
		if session != "" {
			if v, ok := l.t.active.Load(session); ok {
				sc = v.(trace.SpanContext)
			}
		}
	}
	if sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := &logHandler{h: l.h.WithAttrs(attrs), t: l.t, session: l.session}
	for _, a := range attrs {
		if a.Key == "session" {
			c.session = a.Value.String()
		}
	}
	return c
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{h: l.h.WithGroup(name), t: l.t, session: l.session}
}
