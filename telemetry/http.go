package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Middleware reads a request's W3C trace context (traceparent) into its
// context, so that a run started by it (POST /v1/runs) records the
// caller's span as its parent in run.started.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			r = r.WithContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}
