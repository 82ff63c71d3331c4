package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/console"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/worker"
)

// observeFlags are serve's flags of logs and telemetry.
type observeFlags struct {
	logFormat    string
	logLevel     string
	traceContent bool
}

// addObserveFlags registers them on fs.
func addObserveFlags(fs interface {
	StringVar(p *string, name, value, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}) *observeFlags {
	o := &observeFlags{}
	fs.StringVar(&o.logFormat, "log-format", "text", "the `FORMAT` of the node's log lines on stderr: text or json")
	fs.StringVar(&o.logLevel, "log-level", "warn", "the lowest `LEVEL` logged: debug, info, warn or error")
	fs.BoolVar(&o.traceContent, "trace-content", false, "put tool arguments and results into the trace spans (off: content may hold what must not leave the node)")
	return o
}

// check refuses values it does not know.
func (o *observeFlags) check() error {
	if o.logFormat != "text" && o.logFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", o.logFormat)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	return nil
}

// observe is a node's logger and, when the HTTP API is on (for /metrics)
// or OTEL_EXPORTER_OTLP_* asks for an export, its telemetry.
type observe struct {
	log *slog.Logger
	tel *telemetry.Telemetry // nil: no telemetry, nothing observed
}

// startObserve builds the logger and the telemetry of a node.
func startObserve(ctx context.Context, o *observeFlags, httpOn bool, stderr io.Writer) (*observe, error) {
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel))
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(stderr, hopts)
	if o.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, hopts)
	}
	ob := &observe{log: slog.New(h)}
	cfg := telemetry.Config{RecordContent: o.traceContent, Logger: ob.log}
	traces, metrics, err := telemetry.FromEnv(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	if !httpOn && !traces && !metrics {
		return ob, nil
	}
	if ob.tel, err = telemetry.New(cfg); err != nil {
		return nil, err
	}
	// A run's lines carry its trace_id and span_id.
	ob.log = slog.New(ob.tel.LogHandler(h))
	if traces || metrics {
		fmt.Fprintf(stderr, "weft serve: OpenTelemetry export over OTLP/HTTP (traces %v, metrics %v)\n", traces, metrics)
	}
	return ob, nil
}

// observed returns rc with the node's logger and observer.
func (c nodeConfig) observed(rc weft.Config) weft.Config {
	if c.obs != nil {
		rc.Logger = c.obs.log
		if c.obs.tel != nil {
			rc.Observer = c.obs.tel
		}
	}
	return rc
}

// attach gives the telemetry the runtime's log (for sessions this node
// carries on without having seen them start).
func (ob *observe) attach(rt *weft.Runtime) {
	if ob != nil && ob.tel != nil {
		ob.tel.SetStore(rt.Store())
	}
}

// close flushes the exporters.
func (ob *observe) close() error {
	if ob == nil || ob.tel == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	return ob.tel.Shutdown(ctx)
}

// handler mounts, beside the API: the console under /console, and
// /metrics (Prometheus text, for a token with any role); a traceparent on
// an API request parents the run it starts.
func (ob *observe) handler(api *httpapi.API, rt *weft.Runtime) (http.Handler, error) {
	c, err := console.New(console.Config{API: api, Store: rt.Store(), Unauthenticated: api.Unauthenticated(), Logger: ob.log})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	var root http.Handler = api
	if ob.tel != nil {
		root = telemetry.Middleware(api)
		mux.Handle("GET /metrics", viewerOnly(api, ob.tel.Handler()))
	}
	mux.Handle(console.Prefix+"/", c)
	mux.Handle("/", root)
	return mux, nil
}

// viewerOnly serves h to the callers the API admits (any role), asking
// the API's /v1/whoami in-process with the request's Authorization.
func viewerOnly(api http.Handler, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", "/v1/whoami", nil)
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		rec := &statusOnly{h: http.Header{}}
		api.ServeHTTP(rec, req)
		if rec.code != 0 && rec.code != http.StatusOK {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			http.Error(w, strings.ToLower(http.StatusText(rec.code)), rec.code)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// statusOnly keeps the status an in-process API call answered.
type statusOnly struct {
	h    http.Header
	code int
}

func (s *statusOnly) Header() http.Header         { return s.h }
func (s *statusOnly) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusOnly) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

// workerTracing gives weft worker a tracer provider when
// OTEL_EXPORTER_OTLP_* asks for an export: each call it serves is a span,
// a child of the node's (worker.WithTracerProvider). stop flushes it.
func workerTracing(ctx context.Context, stderr io.Writer) (opts []worker.Option, stop func(), err error) {
	cfg := telemetry.Config{}
	traces, err := telemetry.TracesFromEnv(ctx, &cfg)
	if err != nil || !traces {
		return nil, func() {}, err
	}
	tel, err := telemetry.New(cfg) // a worker's calls are counted by the node
	if err != nil {
		return nil, func() {}, err
	}
	fmt.Fprintln(stderr, "weft worker: OpenTelemetry spans over OTLP/HTTP")
	return []worker.Option{worker.WithTracerProvider(tel.TracerProvider())}, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5e9)
		defer cancel()
		_ = tel.Shutdown(sctx)
	}, nil
}
