package telemetry

import (
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-run/weft/events"
)

// The span building is a pure function of the events: tracker.apply takes
// one stored event and returns the spans it ends (spanRec, built by the
// Telemetry with the SDK) and the facts the metrics count. It keeps what
// is open: the run segments, model requests and tool calls.

// spanRec is a span to build: ids, parent, times, attributes.
type spanRec struct {
	name       string
	kind       trace.SpanKind
	trace      trace.TraceID
	id         trace.SpanID
	parent     trace.SpanContext // invalid: a root
	links      []trace.Link
	start, end time.Time
	attrs      []attribute.KeyValue
	events     []spanEvent
	errType    string // set: the span failed (status Error, error.type)
	errMsg     string
	// what the metrics need
	op       string // opInvokeAgent, opChat, opExecuteTool
	agent    string
	model    string
	provider string
	usage    *events.Usage
	tool     string
	toolKind string
	outcome  string
}

type spanEvent struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// runTrack is an open run: its current segment (the work between its
// start or a resume and its settling).
type runTrack struct {
	session, run, agent string
	seg                 int
	open                bool
	trace               trace.TraceID
	span                trace.SpanID
	parent              trace.SpanContext // the first segment's parent
	prev                trace.SpanContext // the segment before this one
	start               time.Time
	events              []spanEvent
	chat                *chatTrack
	tools               map[string]*toolTrack
}

// sc is the current segment's span context.
func (r *runTrack) sc() trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: r.trace, SpanID: r.span, TraceFlags: trace.FlagsSampled})
}

type chatTrack struct {
	version uint64
	model   string
	start   time.Time
}

type toolTrack struct {
	name, toolset string
	args          json.RawMessage
	start         time.Time
	started       bool
	attempt       int // the last attempt started
	kind          string
	node          string
	events        []spanEvent
}

// tracker follows the runs of the sessions a process appends to.
type tracker struct {
	content bool
	runs    map[runID]*runTrack
}

func newTracker(content bool) *tracker {
	return &tracker{content: content, runs: map[runID]*runTrack{}}
}

// runID names a run: run ids are unique within their session.
type runID struct{ session, run string }

// runSpanID is the span id of a run's segment.
func runSpanID(session, run string, seg int) trace.SpanID {
	return spanID("run", session, run, itoa(seg))
}

// toolSpanID is the span id of a tool call's execute_tool span.
func toolSpanID(session, run, call string) trace.SpanID {
	return spanID("tool", session, run, call)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// splitModel splits "<provider>:<model>" (the llm adapters' names).
func splitModel(name string) (provider, model string) {
	if p, m, ok := strings.Cut(name, ":"); ok && p != "" && m != "" {
		return p, m
	}
	return "", name
}

// traceOf reads the trace context of run.started's metadata.
func traceOf(metadata json.RawMessage) (parent trace.SpanContext, tid trace.TraceID) {
	var md map[string]json.RawMessage
	if json.Unmarshal(metadata, &md) != nil || md[MetadataKey] == nil {
		return
	}
	var v struct {
		Traceparent string `json:"traceparent"`
		TraceID     string `json:"trace_id"`
	}
	if json.Unmarshal(md[MetadataKey], &v) != nil {
		return
	}
	if v.Traceparent != "" {
		if sc, ok := parseTraceparent(v.Traceparent); ok {
			return sc, sc.TraceID()
		}
	}
	if id, err := trace.TraceIDFromHex(v.TraceID); err == nil {
		return trace.SpanContext{}, id
	}
	return
}

// apply takes one stored event; it returns the spans it ends.
func (t *tracker) apply(ev events.Event) []spanRec {
	if ev.RunID == "" {
		return nil
	}
	key := runID{ev.SessionID, ev.RunID}
	r := t.runs[key]
	if ev.Type == events.TypeRunStarted {
		var d events.RunStarted
		_ = json.Unmarshal(ev.Data, &d)
		r = &runTrack{session: ev.SessionID, run: ev.RunID, agent: d.Agent, tools: map[string]*toolTrack{}}
		r.parent, r.trace = traceOf(d.Metadata)
		if !r.trace.IsValid() {
			// Started without a trace context: the run's own.
			r.trace = traceID("trace", ev.SessionID, ev.RunID)
		}
		r.open, r.span, r.start = true, runSpanID(ev.SessionID, ev.RunID, 0), ev.Time
		t.runs[key] = r
		return nil
	}
	if r == nil {
		return nil // a run this process did not see start (see Telemetry.load)
	}
	var out []spanRec
	switch ev.Type {
	case events.TypeRunResumed:
		if r.open {
			out = append(out, t.endSegment(r, ev.Time, "resumed", nil))
		}
		r.prev = r.sc()
		r.seg++
		r.open, r.span, r.start = true, runSpanID(r.session, r.run, r.seg), ev.Time
		r.trace = traceID("trace", r.session, r.run, itoa(r.seg))
	case events.TypeRunWaiting:
		var d events.RunWaiting
		_ = json.Unmarshal(ev.Data, &d)
		if r.open {
			out = append(out, t.endSegment(r, ev.Time, "waiting", nil, keyRunStatus.String("waiting"), attribute.String("weft.wait.reason", d.Reason)))
		}
	case events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
		status := strings.TrimPrefix(string(ev.Type), "run.")
		var fail *events.ErrorInfo
		if ev.Type == events.TypeRunFailed {
			var d events.RunFailed
			_ = json.Unmarshal(ev.Data, &d)
			fail = &d.Error
		}
		if !r.open {
			// Settled while waiting (a cancel): a span of no length.
			r.open, r.start = true, ev.Time
		}
		out = append(out, t.endSegment(r, ev.Time, status, fail))
		delete(t.runs, key)
	case events.TypeModelRequest:
		var d events.ModelRequest
		_ = json.Unmarshal(ev.Data, &d)
		r.chat = &chatTrack{version: ev.Version, model: d.Model, start: ev.Time}
	case events.TypeModelResponse:
		var d events.ModelResponse
		_ = json.Unmarshal(ev.Data, &d)
		if r.chat != nil {
			out = append(out, t.endChat(r, ev, d))
		}
		r.chat = nil
	case events.TypeToolRequested:
		var d events.ToolRequested
		_ = json.Unmarshal(ev.Data, &d)
		r.tools[ev.ToolCallID] = &toolTrack{name: d.Tool, toolset: d.Toolset, args: d.Args(), start: ev.Time, kind: "local"}
	case events.TypeToolStarted:
		var d events.ToolStarted
		_ = json.Unmarshal(ev.Data, &d)
		c := r.tools[ev.ToolCallID]
		if c == nil {
			c = &toolTrack{name: d.Tool, kind: "local"}
			r.tools[ev.ToolCallID] = c
		}
		if c.started && d.Attempt <= c.attempt {
			// The same attempt started again: the call runs again in the
			// process that carried its run on (a restart, a takeover).
			c.events = append(c.events, spanEvent{name: "restarted", at: ev.Time, attrs: []attribute.KeyValue{keyAttempt.Int(d.Attempt)}})
		}
		if !c.started {
			c.started, c.start = true, ev.Time
		}
		c.attempt = max(c.attempt, d.Attempt)
		if d.Node != "" {
			c.kind, c.node = "remote", d.Node
		}
	case events.TypeToolRetried:
		var d events.ToolRetried
		_ = json.Unmarshal(ev.Data, &d)
		if c := r.tools[ev.ToolCallID]; c != nil {
			c.events = append(c.events, spanEvent{name: "retry", at: ev.Time, attrs: []attribute.KeyValue{
				keyAttempt.Int(d.Attempt), keyErrorType.String(errorType(d.Error)), attribute.Int64("weft.retry.delay_ms", d.Delay.Milliseconds())}})
		}
	case events.TypeToolReturned:
		var d events.ToolReturned
		_ = json.Unmarshal(ev.Data, &d)
		if c := r.tools[ev.ToolCallID]; c != nil {
			out = append(out, t.endTool(r, ev, c, d))
			delete(r.tools, ev.ToolCallID)
		}
	case events.TypeApprovalRequested, events.TypeDeferredRequested, events.TypeElicitationRequested,
		events.TypeApprovalDecided, events.TypeDeferredResolved, events.TypeElicitationAnswered:
		if r.open {
			r.events = append(r.events, spanEvent{name: string(ev.Type), at: ev.Time, attrs: []attribute.KeyValue{keyToolCallID.String(ev.ToolCallID)}})
		}
	}
	return out
}

// errorType is the error.type of a failure: its kind, else its Go type,
// else "_OTHER" (the conventions' fallback).
func errorType(e events.ErrorInfo) string {
	switch {
	case e.Kind != "":
		return e.Kind
	case e.Type != "":
		return e.Type
	}
	return "_OTHER"
}

// endSegment ends r's open segment with status.
func (t *tracker) endSegment(r *runTrack, at time.Time, status string, fail *events.ErrorInfo, extra ...attribute.KeyValue) spanRec {
	s := spanRec{name: opInvokeAgent + " " + r.agent, kind: trace.SpanKindInternal, trace: r.trace, id: r.span,
		start: r.start, end: at, op: opInvokeAgent, agent: r.agent, outcome: status, events: r.events,
		attrs: append([]attribute.KeyValue{keyOperation.String(opInvokeAgent), keyAgentName.String(r.agent),
			keyConversation.String(r.session), keyRunID.String(r.run), keySegment.Int(r.seg), keyRunStatus.String(status)}, extra...)}
	if r.seg == 0 {
		s.parent = r.parent
	} else if r.prev.IsValid() {
		s.links = []trace.Link{{SpanContext: r.prev, Attributes: []attribute.KeyValue{attribute.String("weft.link", "resumed_from")}}}
	}
	if fail != nil {
		s.errType, s.errMsg = errorType(*fail), fail.Message
	}
	r.open, r.events = false, nil
	return s
}

// endChat ends r's model request with its response.
func (t *tracker) endChat(r *runTrack, ev events.Event, d events.ModelResponse) spanRec {
	provider, reqModel := splitModel(r.chat.model)
	_, respModel := splitModel(d.Model)
	s := spanRec{name: opChat + " " + reqModel, kind: trace.SpanKindClient, trace: r.trace,
		id: spanID("chat", r.session, r.run, itoa(int(r.chat.version))), parent: r.sc(),
		start: later(r.chat.start, r.start), end: ev.Time, op: opChat, model: reqModel, provider: provider, usage: d.Usage,
		attrs: []attribute.KeyValue{keyOperation.String(opChat), keyRequestModel.String(reqModel), keyResponseModel.String(respModel)}}
	if provider != "" {
		s.attrs = append(s.attrs, keyProvider.String(provider))
	}
	if d.FinishReason != "" {
		s.attrs = append(s.attrs, keyFinish.StringSlice([]string{d.FinishReason}))
	}
	if u := d.Usage; u != nil {
		s.attrs = append(s.attrs, keyInputTokens.Int64(u.InputTokens), keyOutputTokens.Int64(u.OutputTokens))
	}
	if d.Attempts > 1 {
		s.attrs = append(s.attrs, attribute.Int("weft.model.attempts", d.Attempts))
	}
	return s
}

// endTool ends tool call c with its return.
func (t *tracker) endTool(r *runTrack, ev events.Event, c *toolTrack, d events.ToolReturned) spanRec {
	s := spanRec{name: opExecuteTool + " " + c.name, kind: trace.SpanKindInternal, trace: r.trace,
		id: toolSpanID(r.session, r.run, ev.ToolCallID), parent: r.sc(), start: later(c.start, r.start), end: ev.Time,
		op: opExecuteTool, tool: c.name, toolKind: c.kind, outcome: "ok", events: c.events,
		attrs: []attribute.KeyValue{keyOperation.String(opExecuteTool), keyToolName.String(c.name), keyToolCallID.String(ev.ToolCallID),
			keyToolType.String("function"), keyToolKind.String(c.kind)}}
	if c.node != "" {
		s.attrs = append(s.attrs, keyNode.String(c.node))
	}
	if d.Attempt > 0 {
		s.attrs = append(s.attrs, keyAttempt.Int(d.Attempt))
	}
	if d.IsError {
		s.outcome = "error"
		if d.Error != nil {
			s.errType, s.errMsg = errorType(*d.Error), d.Error.Message
		} else {
			s.errType = returnKind(d.Return)
		}
	}
	if t.content {
		if len(c.args) > 0 {
			s.attrs = append(s.attrs, keyToolArgs.String(string(c.args)))
		}
		s.attrs = append(s.attrs, keyToolResult.String(string(d.Return)))
	}
	return s
}

// returnKind is the kind of a canonical tool return, "_OTHER" without
// one.
func returnKind(ret json.RawMessage) string {
	var v struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(ret, &v) == nil && v.Kind != "" {
		return v.Kind
	}
	return "_OTHER"
}

// remoteParent returns the traceparent a remote delivery of call carries:
// the call's execute_tool span in its run's current segment.
func (t *tracker) remoteParent(session, run, call string) (trace.SpanContext, bool) {
	r := t.runs[runID{session, run}]
	if r == nil {
		return trace.SpanContext{}, false
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: r.trace, SpanID: toolSpanID(session, run, call), TraceFlags: trace.FlagsSampled}), true
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// remote marks a call as sent to a remote worker.
func (t *tracker) remote(session, run, call string) {
	if r := t.runs[runID{session, run}]; r != nil {
		if c := r.tools[call]; c != nil {
			c.kind = "remote"
		}
	}
}
