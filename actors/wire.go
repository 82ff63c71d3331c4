package actors

import (
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
)

// The tool calls' wire (docs/worker-protocol.md) is package protocol,
// which the Go worker imports instead of the runtime. The names below keep
// the runtime's earlier spelling of it: each is the protocol name it
// stands for.

// The messages.
type (
	// ToolRequest is protocol.ToolRequest.
	ToolRequest = protocol.ToolRequest
	// ToolReport is protocol.ToolReport.
	ToolReport = protocol.ToolReport
	// WorkerDescription is protocol.WorkerDescription.
	WorkerDescription = protocol.WorkerDescription
)

// The ToolReport types (protocol.Report…).
const (
	ReportStarted   = protocol.ReportStarted
	ReportRetried   = protocol.ReportRetried
	ReportProgress  = protocol.ReportProgress
	ReportReturned  = protocol.ReportReturned
	ReportHeartbeat = protocol.ReportHeartbeat
)

// The delivery of remote calls (protocol's delivery.go).
const (
	WorkerQueueGroup = protocol.WorkerQueueGroup
	HeaderCallID     = protocol.HeaderCallID
	HeaderDelivery   = protocol.HeaderDelivery
	HeaderHeartbeat  = protocol.HeaderHeartbeat
	HeaderReply      = protocol.HeaderReply
	WorkerHeartbeat  = protocol.WorkerHeartbeat
	MissedHeartbeats = protocol.MissedHeartbeats
	MaxDeliveries    = protocol.MaxDeliveries
)

// WorkerCallSubject is protocol.WorkerCallSubject.
func WorkerCallSubject(s bus.Subjects, name string) (string, error) {
	return protocol.WorkerCallSubject(s, name)
}

// WorkerCancelSubject is protocol.WorkerCancelSubject.
func WorkerCancelSubject(s bus.Subjects, sessionID, runID, callID string) (string, error) {
	return protocol.WorkerCancelSubject(s, sessionID, runID, callID)
}

// ParseWorkerCancelSubject is protocol.ParseWorkerCancelSubject.
func ParseWorkerCancelSubject(s bus.Subjects, subject string) (sessionID, runID, callID string, err error) {
	return protocol.ParseWorkerCancelSubject(s, subject)
}

// WorkerCancelFilter is protocol.WorkerCancelFilter.
func WorkerCancelFilter(s bus.Subjects) string { return protocol.WorkerCancelFilter(s) }

// WorkerDescribeSubject is protocol.WorkerDescribeSubject.
func WorkerDescribeSubject(s bus.Subjects) string { return protocol.WorkerDescribeSubject(s) }

// Worker pools (protocol's pool.go).

// DefaultPoolConcurrency is protocol.DefaultPoolConcurrency.
const DefaultPoolConcurrency = protocol.DefaultPoolConcurrency

// ErrBadPool is protocol.ErrBadPool.
var ErrBadPool = protocol.ErrBadPool

// ValidatePool is protocol.ValidatePool.
func ValidatePool(pool string) error { return protocol.ValidatePool(pool) }

// WorkerQueueStream is protocol.WorkerQueueStream.
func WorkerQueueStream(s bus.Subjects) string { return protocol.WorkerQueueStream(s) }

// WorkerQueueSubject is protocol.WorkerQueueSubject.
func WorkerQueueSubject(s bus.Subjects, pool, name string) (string, error) {
	return protocol.WorkerQueueSubject(s, pool, name)
}

// WorkerQueueStreamConfig is protocol.WorkerQueueStreamConfig.
func WorkerQueueStreamConfig(s bus.Subjects, replicas int) jetstream.StreamConfig {
	return protocol.WorkerQueueStreamConfig(s, replicas)
}

// WorkerPoolConsumerConfig is protocol.WorkerPoolConsumerConfig.
func WorkerPoolConsumerConfig(s bus.Subjects, pool string) jetstream.ConsumerConfig {
	return protocol.WorkerPoolConsumerConfig(s, pool)
}

// Payloads too large for the bus (protocol's payload.go; PayloadLimits is
// in payload.go).

// DefaultMaxPayloadBytes is protocol.DefaultMaxPayloadBytes.
const DefaultMaxPayloadBytes = protocol.DefaultMaxPayloadBytes

// TooLargeReturn is protocol.TooLargeReturn.
func TooLargeReturn(callID, tool string, attempts, n, limit int, where string) toolsets.Return {
	return protocol.TooLargeReturn(callID, tool, attempts, n, limit, where)
}

// EncodeReport is protocol.EncodeReport.
func EncodeReport(ctx context.Context, r ToolReport, lim PayloadLimits) (body []byte, ok bool, err error) {
	return protocol.EncodeReport(ctx, r, protocol.PayloadLimits(lim))
}

// ResolveReport is protocol.ResolveReport.
func ResolveReport(ctx context.Context, blobs events.BlobStore, r *ToolReport) {
	protocol.ResolveReport(ctx, blobs, r)
}

// EncodeRequest is protocol.EncodeRequest.
func EncodeRequest(ctx context.Context, req ToolRequest, lim PayloadLimits) ([]byte, error) {
	return protocol.EncodeRequest(ctx, req, protocol.PayloadLimits(lim))
}

// ResolveRequest is protocol.ResolveRequest.
func ResolveRequest(ctx context.Context, blobs events.BlobStore, req *ToolRequest) error {
	return protocol.ResolveRequest(ctx, blobs, req)
}

// ErrorReturn is protocol.ErrorReturn.
func ErrorReturn(req ToolRequest, msg string) toolsets.Return { return protocol.ErrorReturn(req, msg) }

// Executing a call (protocol's execute.go).

// ExecuteCall is protocol.ExecuteCall.
func ExecuteCall(ctx context.Context, reg *toolsets.Registry, req ToolRequest, meta map[string]any, report func(ToolReport)) {
	protocol.ExecuteCall(ctx, reg, req, meta, report)
}

// ObservedTool is protocol.ObservedTool.
func ObservedTool(t toolsets.Tool) toolsets.Tool { return protocol.ObservedTool(t) }

// observed is protocol.Observed: the toolset lifecycle wraps the tools of
// a run in it (a type of this package, not an alias, so that its unkeyed
// literals there stay within the package).
type observed struct{ toolsets.Tool }

// Call implements toolsets.Tool as protocol.Observed does.
func (o observed) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	return protocol.Observed{Tool: o.Tool}.Call(ctx, tc, args)
}
