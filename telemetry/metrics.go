package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/weft-run/weft/events"
)

var keyServiceName = semconv.ServiceNameKey

// The metric names: the GenAI conventions' client metrics and weft's own.
const (
	MetricOperationDuration = "gen_ai.client.operation.duration"
	MetricTokenUsage        = "gen_ai.client.token.usage"
	MetricToolCalls         = "weft.tool.calls"
	MetricToolDuration      = "weft.tool.duration"
	MetricRuns              = "weft.runs"
	MetricHITLPending       = "weft.hitl.pending"
	MetricHITLOldestAge     = "weft.hitl.oldest_age"
	MetricHITLWait          = "weft.hitl.wait.duration"
	MetricAppendDuration    = "weft.events.append.duration"
	MetricDeliveries        = "weft.worker.deliveries"
	MetricTakeovers         = "weft.lease.takeovers"
)

// The conventions' bucket boundaries (seconds, tokens).
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	appendBuckets   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
)

type instruments struct {
	opDuration    metric.Float64Histogram
	tokens        metric.Int64Histogram
	toolCalls     metric.Int64Counter
	toolDuration  metric.Float64Histogram
	runs          metric.Int64Counter
	pending       metric.Int64UpDownCounter
	hitlWait      metric.Float64Histogram
	appendLatency metric.Float64Histogram
	deliveries    metric.Int64Counter
	takeovers     metric.Int64Counter
	backendAttr   metric.MeasurementOption
	first, again  metric.MeasurementOption
}

func (m *instruments) redelivery(again bool) metric.MeasurementOption {
	if again {
		return m.again
	}
	return m.first
}

func newInstruments(mt metric.Meter, t *Telemetry) (*instruments, error) {
	m := &instruments{}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	m.opDuration, err = mt.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	m.tokens, err = mt.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	add(err)
	m.toolCalls, err = mt.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"), metric.WithDescription("Tool calls by tool, kind (local, remote) and outcome."))
	add(err)
	m.toolDuration, err = mt.Float64Histogram(MetricToolDuration, metric.WithUnit("s"), metric.WithDescription("Tool call duration, first start to return."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	add(err)
	m.runs, err = mt.Int64Counter(MetricRuns, metric.WithUnit("{run}"), metric.WithDescription("Runs settled, by agent and outcome (completed, failed, cancelled, waiting)."))
	add(err)
	m.pending, err = mt.Int64UpDownCounter(MetricHITLPending, metric.WithUnit("{item}"), metric.WithDescription("Pending HITL items this node recorded, by kind."))
	add(err)
	m.hitlWait, err = mt.Float64Histogram(MetricHITLWait, metric.WithUnit("s"), metric.WithDescription("How long HITL items waited for their decision, by kind."),
		metric.WithExplicitBucketBoundaries(1, 10, 60, 300, 1800, 3600, 14400, 86400))
	add(err)
	m.appendLatency, err = mt.Float64Histogram(MetricAppendDuration, metric.WithUnit("s"), metric.WithDescription("Event append latency, by store backend."),
		metric.WithExplicitBucketBoundaries(appendBuckets...))
	add(err)
	m.deliveries, err = mt.Int64Counter(MetricDeliveries, metric.WithUnit("{delivery}"), metric.WithDescription("Remote tool call deliveries; weft.redelivery=true for the second and later."))
	add(err)
	m.takeovers, err = mt.Int64Counter(MetricTakeovers, metric.WithUnit("{session}"), metric.WithDescription("Sessions this node took over from a node whose lease lapsed."))
	add(err)
	_, err = mt.Float64ObservableGauge(MetricHITLOldestAge, metric.WithUnit("s"), metric.WithDescription("Age of the oldest pending HITL item this node recorded, by kind."),
		metric.WithFloat64Callback(t.observeOldest))
	add(err)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	m.first = metric.WithAttributes(keyRedelivery.Bool(false))
	m.again = metric.WithAttributes(keyRedelivery.Bool(true))
	return m, nil
}

// hitlItem is a pending item this node recorded.
type hitlItem struct {
	kind    string
	since   time.Time
	session string
	run     string
}

// hitlKind is the kind of a HITL event: its item's kind and whether it
// opens (true) or closes it.
func hitlKind(t events.Type) (string, bool, bool) {
	switch t {
	case events.TypeApprovalRequested:
		return "approval", true, true
	case events.TypeApprovalDecided:
		return "approval", false, true
	case events.TypeDeferredRequested:
		return "deferred", true, true
	case events.TypeDeferredResolved:
		return "deferred", false, true
	case events.TypeElicitationRequested:
		return "elicitation", true, true
	case events.TypeElicitationAnswered:
		return "elicitation", false, true
	}
	return "", false, false
}

// trackHITL follows the pending items; count: also the metrics. A run
// that ends takes its items that were never decided (a cancel) with it.
func (t *Telemetry) trackHITL(ev events.Event, count bool) {
	kind, opens, ok := hitlKind(ev.Type)
	if !ok {
		if ev.Type == events.TypeRunCompleted || ev.Type == events.TypeRunFailed || ev.Type == events.TypeRunCancelled {
			for key, it := range t.hitl {
				if it.session == ev.SessionID && it.run == ev.RunID {
					delete(t.hitl, key)
					if count {
						t.m.pending.Add(context.Background(), -1, metric.WithAttributes(keyHITLKind.String(it.kind)))
					}
				}
			}
		}
		return
	}
	key := ev.SessionID + "/" + ev.ToolCallID
	ctx, attrs := context.Background(), metric.WithAttributes(keyHITLKind.String(kind))
	if opens {
		if _, dup := t.hitl[key]; !dup {
			t.hitl[key] = hitlItem{kind: kind, since: ev.Time, session: ev.SessionID, run: ev.RunID}
			if count {
				t.m.pending.Add(ctx, 1, attrs)
			}
		}
		return
	}
	it, had := t.hitl[key]
	delete(t.hitl, key)
	if count && had {
		t.m.pending.Add(ctx, -1, attrs)
		t.m.hitlWait.Record(ctx, ev.Time.Sub(it.since).Seconds(), attrs)
	}
}

// observeOldest reports the oldest pending item's age by kind.
func (t *Telemetry) observeOldest(_ context.Context, o metric.Float64Observer) error {
	t.mu.Lock()
	oldest := map[string]time.Time{}
	for _, it := range t.hitl {
		if o, ok := oldest[it.kind]; !ok || it.since.Before(o) {
			oldest[it.kind] = it.since
		}
	}
	t.mu.Unlock()
	for kind, since := range oldest {
		o.Observe(time.Since(since).Seconds(), metric.WithAttributes(keyHITLKind.String(kind)))
	}
	return nil
}

// optKey names a cached set of metric attributes.
type optKey struct {
	what    uint8
	a, b, c string
}

const (
	optRuns uint8 = iota
	optChat
	optTokensIn
	optTokensOut
	optToolCalls
	optToolDuration
	optAgent
)

// opt returns the measurement option of k's attributes, built once (the
// same few sets recur: building them each time is most of the metrics'
// allocations). Called with t.mu held.
func (t *Telemetry) opt(k optKey) metric.MeasurementOption {
	if o, ok := t.opts[k]; ok {
		return o
	}
	var attrs []attribute.KeyValue
	switch k.what {
	case optRuns:
		attrs = []attribute.KeyValue{keyAgentName.String(k.a), keyOutcome.String(k.b)}
	case optChat, optTokensIn, optTokensOut:
		attrs = []attribute.KeyValue{keyOperation.String(opChat), keyRequestModel.String(k.a)}
		if k.b != "" {
			attrs = append(attrs, keyProvider.String(k.b))
		}
		switch k.what {
		case optTokensIn:
			attrs = append(attrs, keyTokenType.String("input"))
		case optTokensOut:
			attrs = append(attrs, keyTokenType.String("output"))
		}
	case optToolCalls:
		attrs = []attribute.KeyValue{keyToolName.String(k.a), keyToolKind.String(k.b), keyOutcome.String(k.c)}
	case optToolDuration:
		attrs = []attribute.KeyValue{keyToolName.String(k.a), keyToolKind.String(k.b)}
	case optAgent:
		attrs = []attribute.KeyValue{keyOperation.String(opInvokeAgent), keyAgentName.String(k.a)}
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	if len(t.opts) < maxOpts {
		t.opts[k] = o
	}
	return o
}

// maxOpts bounds the cache (tool and model names come from the log).
const maxOpts = 4096

// countEvent counts what an event says by itself: settled runs, HITL.
func (t *Telemetry) countEvent(ctx context.Context, ev events.Event) {
	t.trackHITL(ev, true)
	switch ev.Type {
	case events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled, events.TypeRunWaiting:
		agent := ""
		if r := t.track.runs[runID{ev.SessionID, ev.RunID}]; r != nil {
			agent = r.agent
		}
		t.m.runs.Add(ctx, 1, t.opt(optKey{what: optRuns, a: agent, b: strings.TrimPrefix(string(ev.Type), "run.")}))
	}
}

// countSpan records the metrics of an ended span.
func (t *Telemetry) countSpan(ctx context.Context, s spanRec) {
	d := s.end.Sub(s.start).Seconds()
	switch s.op {
	case opChat:
		t.m.opDuration.Record(ctx, d, t.opt(optKey{what: optChat, a: s.model, b: s.provider}))
		if u := s.usage; u != nil {
			t.m.tokens.Record(ctx, u.InputTokens, t.opt(optKey{what: optTokensIn, a: s.model, b: s.provider}))
			t.m.tokens.Record(ctx, u.OutputTokens, t.opt(optKey{what: optTokensOut, a: s.model, b: s.provider}))
		}
	case opExecuteTool:
		t.m.toolCalls.Add(ctx, 1, t.opt(optKey{what: optToolCalls, a: s.tool, b: s.toolKind, c: s.outcome}))
		t.m.toolDuration.Record(ctx, d, t.opt(optKey{what: optToolDuration, a: s.tool, b: s.toolKind}))
	case opInvokeAgent:
		if s.outcome != "resumed" {
			t.m.opDuration.Record(ctx, d, t.opt(optKey{what: optAgent, a: s.agent}))
		}
	}
}
