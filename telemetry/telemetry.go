package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
)

// Config configures a Telemetry.
type Config struct {
	// SpanExporters receive the spans (an OTLP exporter, the SDK's
	// in-memory one in tests); none: spans are built and dropped (the
	// cost of tracing without an exporter).
	SpanExporters []sdktrace.SpanExporter
	// Syncer makes span export synchronous (tests); otherwise spans are
	// batched.
	Syncer bool
	// MetricReaders receive the metrics besides the Prometheus handler's
	// own reader (an OTLP periodic reader).
	MetricReaders []sdkmetric.Reader
	// RecordContent puts tool arguments and results into spans. Off by
	// default: content may hold what must not leave the process.
	RecordContent bool
	// Store is the event log, read once for a session this process did
	// not see start (after a takeover or a restart); nil: such runs get
	// no spans.
	Store events.Store
	// Backend names the store in the append-latency metric ("jetstream",
	// "memstore", …); empty: the store's Go type.
	Backend string
	// Resource describes the process; nil: service.name weft.
	Resource *resource.Resource
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Telemetry is a weft.Observer that makes spans and metrics of a
// runtime's work. Create it with New; Shutdown flushes it.
type Telemetry struct {
	cfg     Config
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	prom    *sdkmetric.ManualReader
	tracer  trace.Tracer
	m       *instruments
	log     *slog.Logger
	backend string

	mu    sync.Mutex
	track *tracker
	seen  map[string]bool // sessions whose log this process has read
	// read is the last version of a session's log read whole for a
	// sub-run's start (callSpan): its events up to it, whose appends
	// this process may yet be told of, are applied once.
	read map[string]uint64
	hitl map[string]hitlItem
	// active is each session's open run segment (session id →
	// trace.SpanContext), for LogHandler; kept only once logs says a
	// LogHandler was made.
	active sync.Map
	logs   atomic.Bool
	opts   map[optKey]metric.MeasurementOption
}

var _ weft.Observer = (*Telemetry)(nil)

// New returns a Telemetry.
func New(cfg Config) (*Telemetry, error) {
	res := cfg.Resource
	if res == nil {
		res = resource.NewSchemaless(keyServiceName.String("weft"))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithIDGenerator(idGenerator{}), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample()))}
	for _, e := range cfg.SpanExporters {
		if cfg.Syncer {
			opts = append(opts, sdktrace.WithSyncer(e))
		} else {
			opts = append(opts, sdktrace.WithBatcher(e))
		}
	}
	t := &Telemetry{cfg: cfg, tp: sdktrace.NewTracerProvider(opts...), prom: sdkmetric.NewManualReader(),
		log: cfg.Logger, track: newTracker(cfg.RecordContent), seen: map[string]bool{}, read: map[string]uint64{}, hitl: map[string]hitlItem{}, opts: map[optKey]metric.MeasurementOption{}}
	mopts := []sdkmetric.Option{sdkmetric.WithReader(t.prom), sdkmetric.WithResource(res)}
	for _, r := range cfg.MetricReaders {
		mopts = append(mopts, sdkmetric.WithReader(r))
	}
	t.mp = sdkmetric.NewMeterProvider(mopts...)
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	t.backend = cfg.Backend
	t.tracer = t.tp.Tracer("github.com/weft-run/weft")
	var err error
	if t.m, err = newInstruments(t.mp.Meter("github.com/weft-run/weft"), t); err != nil {
		return nil, err
	}
	t.setBackend(cfg.Store)
	return t, nil
}

// SetStore sets Config.Store once the runtime that opens the log has
// started (the Telemetry is its Config.Observer, made before it).
func (t *Telemetry) SetStore(s events.Store) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cfg.Store = s
	t.setBackend(s)
}

// setBackend names the log's backend after s's type when Config.Backend
// named none (and none was named so before), with the metric attribute
// of it.
func (t *Telemetry) setBackend(s events.Store) {
	if t.backend == "" && s != nil {
		t.backend = fmt.Sprintf("%T", s)
	}
	t.m.backendAttr = metric.WithAttributes(keyBackend.String(t.backend))
}

// TracerProvider is the provider of the spans (give it to remote workers'
// worker.WithTracerProvider in the same process, or to other libraries).
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Shutdown flushes and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}

// RunStarting records the caller's trace context in a run's metadata
// (MetadataKey), or a new trace id when ctx has no span, so that the node
// that carries the run on continues its trace. A sub-run (metadata
// actors.MetaParent naming a call of a run this process follows) is put
// under the call's execute_tool span, derived from the log as the span
// itself will be, whatever span ctx carries.
func (t *Telemetry) RunStarting(ctx context.Context, md map[string]any) {
	if _, ok := md[MetadataKey]; ok {
		return
	}
	sc := trace.SpanContextFromContext(ctx)
	if p, ok := md[actors.MetaParent]; ok {
		if call, ok := t.callSpan(actors.ParentFrom(p)); ok {
			sc = call
		}
	}
	if sc.IsValid() {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
		md[MetadataKey] = map[string]any{"traceparent": carrier["traceparent"]}
		return
	}
	md[MetadataKey] = map[string]any{"trace_id": newTraceID().String()}
}

// Appended derives spans and metrics from stored events.
func (t *Telemetry) Appended(stored []events.Event, took time.Duration) {
	ctx := context.Background()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m.appendLatency.Record(ctx, took.Seconds(), t.m.backendAttr)
	// A session first seen past its start (a takeover, a restart) has its
	// log read once for its open runs; one first seen at a run's start
	// has none before it (its earlier runs ended).
	if len(stored) > 0 && stored[0].Version > 1 && stored[0].Type != events.TypeRunStarted && !t.seen[stored[0].SessionID] {
		t.load(stored[0])
	}
	for _, ev := range stored {
		t.seen[ev.SessionID] = true
		if v, ok := t.read[ev.SessionID]; ok {
			if ev.Version <= v {
				continue // applied when its log was read
			}
			delete(t.read, ev.SessionID)
		}
		t.countEvent(ctx, ev)
		for _, s := range t.track.apply(ev) {
			t.emit(s)
			t.countSpan(ctx, s)
		}
		t.setActive(ev)
	}
	if len(t.seen) > maxSeen {
		// Bounded: a session forgotten is read again at its next append
		// that is not a run's start.
		clear(t.seen)
		clear(t.read)
	}
}

// maxSeen bounds the sessions remembered as read.
const maxSeen = 100_000

// load reads the log of first's session up to before first, to know its
// open runs (a session this process carries on without having seen it
// start: a takeover, a restart).
func (t *Telemetry) load(first events.Event) {
	t.readLog(first.SessionID, first.Stream, first.Version)
}

// readLog reads a session's log before version before (0: all of it) to
// know its open runs; it returns the last version it read.
func (t *Telemetry) readLog(session, stream string, before uint64) uint64 {
	t.seen[session] = true
	if t.cfg.Store == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evs, err := t.cfg.Store.ReadStream(ctx, stream, 0)
	if err != nil {
		t.log.Warn("telemetry: read the session's log", "session", session, "err", err)
		return 0
	}
	var last uint64
	for _, ev := range evs {
		if before > 0 && ev.Version >= before {
			break
		}
		t.track.apply(ev) // spans the other node ended are its own
		t.trackHITL(ev, false)
		last = ev.Version
	}
	return last
}

// emit builds s with the SDK.
func (t *Telemetry) emit(s spanRec) {
	ctx := context.Background()
	if s.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, s.parent)
	}
	ctx = withIDs(ctx, s.trace, s.id)
	opts := []trace.SpanStartOption{trace.WithTimestamp(s.start), trace.WithSpanKind(s.kind), trace.WithAttributes(s.attrs...)}
	if len(s.links) > 0 {
		opts = append(opts, trace.WithLinks(s.links...))
	}
	if !s.parent.IsValid() {
		opts = append(opts, trace.WithNewRoot())
	}
	_, sp := t.tracer.Start(ctx, s.name, opts...)
	for _, e := range s.events {
		sp.AddEvent(e.name, trace.WithTimestamp(e.at), trace.WithAttributes(e.attrs...))
	}
	if s.errType != "" {
		sp.SetAttributes(keyErrorType.String(s.errType))
		sp.SetStatus(codes.Error, s.errMsg)
	}
	sp.End(trace.WithTimestamp(s.end))
}

// Delivering puts the call's traceparent into a remote delivery's
// headers and counts the delivery.
func (t *Telemetry) Delivering(call actors.ToolRequest, delivery int, h nats.Header) {
	t.m.deliveries.Add(context.Background(), 1, t.m.redelivery(delivery > 1))
	t.mu.Lock()
	sc, ok := t.track.remoteParent(call.SessionID, call.RunID, call.CallID)
	t.track.remote(call.SessionID, call.RunID, call.CallID)
	t.mu.Unlock()
	if ok {
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), propagation.HeaderCarrier(h))
	}
}

// TookOver counts a lease takeover.
func (t *Telemetry) TookOver(string) {
	t.m.takeovers.Add(context.Background(), 1)
}

// parseTraceparent reads a W3C traceparent.
func parseTraceparent(v string) (trace.SpanContext, bool) {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": v})
	sc := trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}

// setActive keeps active up to date after ev: the session's open run
// segment, if any.
func (t *Telemetry) setActive(ev events.Event) {
	if ev.RunID == "" || !t.logs.Load() {
		return
	}
	var id trace.SpanID
	r := t.track.runs[runID{ev.SessionID, ev.RunID}]
	if r != nil && r.open {
		id = r.span
	}
	prev, ok := t.active.Load(ev.SessionID)
	if id.IsValid() {
		if !ok || prev.(trace.SpanContext).SpanID() != id {
			t.active.Store(ev.SessionID, r.sc())
		}
		return
	}
	if ok {
		t.active.Delete(ev.SessionID)
	}
}
