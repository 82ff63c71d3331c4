package actors

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// The command verbs of weft.cmd.session.<id>.<verb>.
const (
	VerbStart  = "start"
	VerbResume = "resume"
	VerbCancel = "cancel"
)

// StartCommand is the body of a start command: start run RunID of agent
// Agent with Prompt.
type StartCommand struct {
	RunID  string `json:"run_id"`
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
	// Metadata is the run's metadata (a JSON object; optional), recorded
	// in run.started and shown to tools (ToolContext.Metadata) and
	// toolsets (ToolsetContext.Metadata).
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ResumeCommand is the body of a resume command: one decision for every
// pending item of the waiting run RunID.
type ResumeCommand struct {
	RunID     string     `json:"run_id"`
	Decisions []Decision `json:"decisions"`
}

// CancelCommand is the body of a cancel command.
type CancelCommand struct {
	RunID  string `json:"run_id"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// CommandReply is the reply to every command: the run and the session
// version after the command's events, or the error that refused it.
type CommandReply struct {
	RunID   string        `json:"run_id,omitempty"`
	Version uint64        `json:"version,omitempty"`
	Error   *CommandError `json:"error,omitempty"`
}

// ToolRequest is the body of a request on weft.node.<node id>.tool.<name>
// (a local tool) or <root>.worker.call.<name> (a remote one): one call to
// execute. The reply subject receives ToolReports.
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
	// Metadata is the run's metadata (a JSON object), sent to remote tool
	// workers only: a host's own tool actor reads it from the run.
	Metadata map[string]any `json:"metadata,omitempty"`
	// ModelRetries is how many times the model has been asked to retry
	// this tool in the run before this call (toolsets.ToolContext's
	// ModelRetries), counted from the run's events.
	ModelRetries int `json:"model_retries,omitempty"`
}

// The ToolReport types.
const (
	ReportStarted  = "started"
	ReportRetried  = "retried"
	ReportProgress = "progress"
	ReportReturned = "returned"
)

// ToolReport is a message from a tool actor to the scheduler on the reply
// subject of a ToolRequest: zero or more started / retried / progress
// reports, then exactly one returned report carrying the canonical return.
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

// record is an event the session actor builds, with the typed values its
// data was encoded from, so that the actor folds those values instead of
// decoding the JSON it has just encoded. Events read from the log have no
// typed values; the fold decodes them (SessionState.Apply).
type record struct {
	events.Event
	// data is the events.* value Data encodes.
	data any
	// extra is a nested value Data carries as JSON: the llm.Message of a
	// model.response, the toolsets.Return of a tool.returned, the prompt
	// (string) of a run.started, the output (string) of a run.completed.
	extra any
}

// newRecord builds an event of type t about run/call with data encoded as
// JSON. Its ID is set here (UUIDv7) so that a retried append is idempotent.
func newRecord(t events.Type, session, run, call string, data any) record {
	b, err := json.Marshal(data)
	if err != nil {
		// Data structs of the catalogue always encode; a failure here is a
		// programming error.
		panic("actors: encode " + string(t) + ": " + err.Error())
	}
	// Time and SchemaVersion are set here, not left to the store, so that
	// the events the host publishes are the ones stored.
	sv, _ := t.SchemaVersion()
	return record{Event: events.Event{ID: uuid.Must(uuid.NewV7()), Type: t, SchemaVersion: sv, Time: time.Now().UTC(),
		SessionID: session, RunID: run, ToolCallID: call, Data: b}, data: data}
}

// newEvent is newRecord without the typed values.
func newEvent(t events.Type, session, run, call string, data any) events.Event {
	return newRecord(t, session, run, call, data).Event
}

// ReportHeartbeat is the type of the ToolReport a remote tool worker sends
// on a call's reply subject while the call runs (see WorkerHeartbeat).
const ReportHeartbeat = "heartbeat"

// The remote tool worker protocol (docs/worker-protocol.md). Workers are
// other processes that serve tools: a host sends the calls of the tool
// names it was told are remote (Host.AddRemoteTools) to
// <root>.worker.call.<name> in queue group WorkerQueueGroup instead of to
// its own tool actor.
const (
	// WorkerQueueGroup is the queue group workers serve calls in.
	WorkerQueueGroup = "weft-workers"
	// HeaderCallID carries the call id of a request (unique within its
	// run: the idempotency key is the session, run and call ids).
	HeaderCallID = "Weft-Call-Id"
	// HeaderDelivery is the delivery number of a request: 1, then 2, 3, …
	// when the host sends the call again after a worker went silent.
	HeaderDelivery = "Weft-Delivery"
	// HeaderHeartbeat is the heartbeat interval the host expects, in
	// milliseconds.
	HeaderHeartbeat = "Weft-Heartbeat-Ms"
	// WorkerHeartbeat is the interval at which a worker reports a running
	// call with a heartbeat report.
	WorkerHeartbeat = 250 * time.Millisecond
	// MissedHeartbeats is how many heartbeat intervals may pass without
	// any report of a call before the host sends it again.
	MissedHeartbeats = 4
	// MaxDeliveries is how many times a host sends a call to workers
	// before it gives up with an execution error. A worker cut off from
	// the network without its connection closing (stopped, partitioned)
	// keeps its queue subscription until the server notices, and each
	// delivery may land on it again: the budget is generous.
	MaxDeliveries = 10
)

// WorkerCallSubject returns the subject workers of tool name serve:
// "<root>.worker.call.<name>".
func WorkerCallSubject(s bus.Subjects, name string) (string, error) {
	tok, err := bus.EscapeToken(name)
	if err != nil {
		return "", err
	}
	return s.Root() + ".worker.call." + tok, nil
}

// WorkerCancelSubject returns the subject a host publishes on to cancel
// remote call callID of run runID of session sessionID:
// "<root>.worker.cancel.<session id>.<run id>.<call id>", each escaped
// with bus.EscapeToken. Call ids are unique only within a run (providers
// reuse ids such as "call_1"), so a call is named by the triple.
func WorkerCancelSubject(s bus.Subjects, sessionID, runID, callID string) (string, error) {
	var toks [3]string
	for i, v := range [3]string{sessionID, runID, callID} {
		tok, err := bus.EscapeToken(v)
		if err != nil {
			return "", err
		}
		toks[i] = tok
	}
	return s.Root() + ".worker.cancel." + toks[0] + "." + toks[1] + "." + toks[2], nil
}

// ParseWorkerCancelSubject is the inverse of WorkerCancelSubject: it
// returns the (unescaped) session, run and call ids a cancel subject names.
func ParseWorkerCancelSubject(s bus.Subjects, subject string) (sessionID, runID, callID string, err error) {
	prefix := s.Root() + ".worker.cancel."
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", "", &bus.TokenError{What: "cancel subject", Value: subject, Reason: "does not start with " + prefix}
	}
	toks := strings.Split(rest, ".")
	if len(toks) != 3 {
		return "", "", "", &bus.TokenError{What: "cancel subject", Value: subject, Reason: "want <session id>.<run id>.<call id>"}
	}
	var ids [3]string
	for i, tok := range toks {
		if ids[i], err = bus.UnescapeToken(tok); err != nil {
			return "", "", "", err
		}
	}
	return ids[0], ids[1], ids[2], nil
}

// WorkerCancelFilter returns the filter of every cancel subject:
// "<root>.worker.cancel.*.*.*".
func WorkerCancelFilter(s bus.Subjects) string { return s.Root() + ".worker.cancel.*.*.*" }

// WorkerDescribeSubject returns the subject every worker answers with its
// WorkerDescription: "<root>.worker.describe".
func WorkerDescribeSubject(s bus.Subjects) string { return s.Root() + ".worker.describe" }

// WorkerDescription is a worker's answer on WorkerDescribeSubject: its id
// and the definitions of the tools it serves.
type WorkerDescription struct {
	WorkerID string                `json:"worker_id"`
	Tools    []toolsets.Definition `json:"tools"`
	// Pool is the worker pool the worker takes its calls from (see
	// WorkerQueueSubject); empty: the core queue group.
	Pool string `json:"pool,omitempty"`
}
