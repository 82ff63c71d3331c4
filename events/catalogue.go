package events

import (
	"encoding/json"
	"reflect"
	"slices"
)

// The catalogue: every event type weft records. The set is closed; Decode
// rejects any other type. Type strings are dotted lowercase tokens that
// become NATS subject suffixes, so subscribers can filter on them
// (weft.evt.session.*.tool.returned). CATALOGUE.md documents each type, its
// data struct and its schema versions.
const (
	// Runs: one agent run inside a session.
	TypeRunStarted   Type = "run.started"   // RunStarted
	TypeRunWaiting   Type = "run.waiting"   // RunWaiting
	TypeRunResumed   Type = "run.resumed"   // RunResumed
	TypeRunCompleted Type = "run.completed" // RunCompleted
	TypeRunFailed    Type = "run.failed"    // RunFailed
	TypeRunCancelled Type = "run.cancelled" // RunCancelled
	TypeRunHandoff   Type = "run.handoff"   // RunHandoff

	// Model calls.
	TypeModelRequest  Type = "model.request"  // ModelRequest
	TypeModelResponse Type = "model.response" // ModelResponse
	// Live model output, published and never recorded (LiveOnly).
	TypeModelDelta Type = "model.delta" // ModelDelta

	// Tool calls.
	TypeToolRequested Type = "tool.requested" // ToolRequested
	TypeToolStarted   Type = "tool.started"   // ToolStarted
	TypeToolRetried   Type = "tool.retried"   // ToolRetried
	TypeToolReturned  Type = "tool.returned"  // ToolReturned
	TypeToolProgress  Type = "tool.progress"  // ToolProgress

	// Human approval of a tool call.
	TypeApprovalRequested Type = "approval.requested" // ApprovalRequested
	TypeApprovalDecided   Type = "approval.decided"   // ApprovalDecided
	// A resume (approvals, deferred results) the session refused.
	TypeDecisionRefused Type = "decision.refused" // DecisionRefused

	// Deferred tool calls, resolved outside the run.
	TypeDeferredRequested Type = "deferred.requested" // DeferredRequested
	TypeDeferredResolved  Type = "deferred.resolved"  // DeferredResolved

	// Input a tool call asks of a person (elicitation), and the answer.
	TypeElicitationRequested Type = "elicitation.requested" // ElicitationRequested
	TypeElicitationAnswered  Type = "elicitation.answered"  // ElicitationAnswered

	// Toolset lifecycle.
	TypeToolsetInitialized Type = "toolset.initialized" // ToolsetInitialized
	TypeToolsetRefreshed   Type = "toolset.refreshed"   // ToolsetRefreshed
	TypeToolsetClosed      Type = "toolset.closed"      // ToolsetClosed
	TypeToolsetUnavailable Type = "toolset.unavailable" // ToolsetUnavailable
	TypeToolsetFailed      Type = "toolset.failed"      // ToolsetFailed

	// Tool search (loading tools on demand).
	TypeToolSearchInitialized Type = "tool_search.initialized" // ToolSearchInitialized
	TypeToolSearchLoaded      Type = "tool_search.loaded"      // ToolSearchLoaded
	TypeToolSearchNoMatch     Type = "tool_search.no_match"    // ToolSearchNoMatch
	TypeToolSearchFailed      Type = "tool_search.failed"      // ToolSearchFailed

	// Usage accounting.
	TypeUsageSnapshot Type = "usage.snapshot" // UsageSnapshot

	// Error handlers a tool registered, run when their run failed or was
	// cancelled.
	TypeErrorHandlerRan Type = "error_handler.ran" // ErrorHandlerRan
)

// spec is the catalogue entry of one type: its current schema version, the
// Go type of its data at that version, and a decoder per known schema
// version. A decoder of an older version returns the current struct
// (upcasting), so Decode always yields the current shape.
type spec struct {
	current int
	goType  reflect.Type
	decode  map[int]func(json.RawMessage) (any, error)
	// sealable: goType's encoding decodes by construction (see "Sealed
	// data" in sealed.go).
	sealable bool
	// liveOnly: the type is published live and never recorded.
	liveOnly bool
}

// v1 is the spec of a type whose only schema version is 1, with data T.
func v1[T any]() spec {
	fast := planOf(reflect.TypeFor[T]())
	return spec{
		current:  1,
		goType:   reflect.TypeFor[T](),
		sealable: decodesByConstruction(reflect.TypeFor[T]()),
		decode: map[int]func(json.RawMessage) (any, error){
			1: func(data json.RawMessage) (any, error) {
				var v T
				if fast != nil && fastDecode(fast, data, reflect.ValueOf(&v).Elem()) {
					return v, nil
				}
				var slow T // fastDecode may have left v half filled
				err := decodeStrict(data, &slow)
				return slow, err
			},
		},
	}
}

// liveOnly marks s as the spec of a type that is never recorded.
func liveOnly(s spec) spec {
	s.liveOnly = true
	return s
}

// catalogue maps every known type to its spec.
var catalogue = map[Type]spec{
	TypeRunStarted:   v1[RunStarted](),
	TypeRunWaiting:   v1[RunWaiting](),
	TypeRunResumed:   v1[RunResumed](),
	TypeRunCompleted: v1[RunCompleted](),
	TypeRunFailed:    v1[RunFailed](),
	TypeRunCancelled: v1[RunCancelled](),
	TypeRunHandoff:   v1[RunHandoff](),

	TypeModelRequest:  v1[ModelRequest](),
	TypeModelResponse: v1[ModelResponse](),
	TypeModelDelta:    liveOnly(v1[ModelDelta]()),

	TypeToolRequested:   v1[ToolRequested](),
	TypeToolStarted:     v1[ToolStarted](),
	TypeToolRetried:     v1[ToolRetried](),
	TypeToolReturned:    v1[ToolReturned](),
	TypeErrorHandlerRan: v1[ErrorHandlerRan](),
	TypeToolProgress:    v1[ToolProgress](),

	TypeApprovalRequested: v1[ApprovalRequested](),
	TypeApprovalDecided:   v1[ApprovalDecided](),
	TypeDecisionRefused:   v1[DecisionRefused](),

	TypeDeferredRequested: v1[DeferredRequested](),
	TypeDeferredResolved:  v1[DeferredResolved](),

	TypeElicitationRequested: v1[ElicitationRequested](),
	TypeElicitationAnswered:  v1[ElicitationAnswered](),

	TypeToolsetInitialized: v1[ToolsetInitialized](),
	TypeToolsetRefreshed:   v1[ToolsetRefreshed](),
	TypeToolsetClosed:      v1[ToolsetClosed](),
	TypeToolsetUnavailable: v1[ToolsetUnavailable](),
	TypeToolsetFailed:      v1[ToolsetFailed](),

	TypeToolSearchInitialized: v1[ToolSearchInitialized](),
	TypeToolSearchLoaded:      v1[ToolSearchLoaded](),
	TypeToolSearchNoMatch:     v1[ToolSearchNoMatch](),
	TypeToolSearchFailed:      v1[ToolSearchFailed](),

	TypeUsageSnapshot: v1[UsageSnapshot](),
}

// Types returns every type in the catalogue, sorted.
func Types() []Type {
	ts := make([]Type, 0, len(catalogue))
	for t := range catalogue {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// Known reports whether t is in the catalogue.
func (t Type) Known() bool {
	_, ok := catalogue[t]
	return ok
}

// SchemaVersion returns the current schema version of t's data, and false
// for a type that is not in the catalogue.
func (t Type) SchemaVersion() (int, bool) {
	s, ok := catalogue[t]
	return s.current, ok
}
