package protocol

import (
	"encoding/json"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// ToolRequest is the body of a request on <root>.worker.call.<name> (or,
// for a worker pool, <root>.worker.queue.<pool>.<name>): one call for a
// remote worker to execute. Its reply subject (or, for a pool,
// HeaderReply) receives ToolReports. A node's local tools get the same
// value in its own process: their calls never travel on NATS.
type ToolRequest struct {
	SessionID string          `json:"session_id"`
	RunID     string          `json:"run_id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ArgumentsBlob, set instead of Arguments, names the arguments in the
	// blob store when they make the call too large for a message (see
	// EncodeRequest and ResolveRequest).
	ArgumentsBlob *events.BlobRef `json:"arguments_blob,omitempty"`
	// Approval is set for an approved call.
	Approval *toolsets.Approval `json:"approval,omitempty"`
	// Elicitation is set for a call run again after a person answered the
	// input it asked for (toolsets.ToolContext's Elicitation).
	Elicitation *toolsets.Elicitation `json:"elicitation,omitempty"`
	// Metadata is the run's metadata (a JSON object), sent to remote tool
	// workers only: a node's local calls read it from the run.
	Metadata map[string]any `json:"metadata,omitempty"`
	// ModelRetries is how many times the model has been asked to retry
	// this tool in the run before this call (toolsets.ToolContext's
	// ModelRetries), counted from the run's events.
	ModelRetries int `json:"model_retries,omitempty"`
	// Code is the journal and variables a code-mode call (run_code) runs
	// its program with (toolsets.ToolContext's Code); nil for other calls.
	Code *toolsets.CodeInput `json:"code,omitempty"`
}

// The ToolReport types.
const (
	ReportStarted  = "started"
	ReportRetried  = "retried"
	ReportProgress = "progress"
	ReportReturned = "returned"
	// ReportHeartbeat is the type of the report a remote tool worker sends
	// on a call's reply subject while the call runs (see WorkerHeartbeat).
	ReportHeartbeat = "heartbeat"
)

// ToolReport is a message from whoever executes a call (a remote worker,
// on the reply subject of its ToolRequest; a node's local call, in
// process) to the node that sent it: zero or more started / retried /
// progress (and, from a worker, heartbeat) reports, then exactly one
// returned report carrying the canonical return.
type ToolReport struct {
	Type    string `json:"type"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Attempt int    `json:"attempt,omitempty"`
	// Error is the failed attempt of a retried report.
	Error *events.ErrorInfo `json:"error,omitempty"`
	// Progress is the tool's progress event of a progress report.
	Progress *toolsets.Progress `json:"progress,omitempty"`
	// Return is the call's canonical return of a returned report.
	Return *toolsets.Return `json:"return,omitempty"`
	// ReturnBlob, set instead of Return, names the return (its JSON) in
	// the blob store when it makes the report too large for a message
	// (see EncodeReport and ResolveReport).
	ReturnBlob *events.BlobRef `json:"return_blob,omitempty"`
}

// WorkerDescription is a worker's answer on WorkerDescribeSubject: its id
// and the definitions of the tools it serves.
type WorkerDescription struct {
	WorkerID string                `json:"worker_id"`
	Tools    []toolsets.Definition `json:"tools"`
	// Pool is the worker pool the worker takes its calls from (see
	// WorkerQueueSubject); empty: the core queue group.
	Pool string `json:"pool,omitempty"`
}
