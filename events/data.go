package events

import (
	"bytes"
	"encoding/json"
	"time"
)

// This file holds the data structs of the catalogue, one per type, at their
// current schema version. They are plain JSON values: ids that the envelope
// already carries (session, run, tool call) are not repeated here, and
// payloads owned by other packages (model messages, tool arguments and
// returns) are carried as json.RawMessage in their canonical encoding.

// ErrorInfo describes a failure recorded in an event.
type ErrorInfo struct {
	// Kind is a short machine-readable class ("timeout", "panic", …); for
	// a tool's error, its return kind ("execution", "timeout", …).
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message"`
	// Type is the Go type of the error, when it came from Go code, such as
	// "*fs.PathError" (optional; see toolsets.ErrorType).
	Type string `json:"type,omitempty"`
}

// Usage counts what a run or a session consumed.
type Usage struct {
	Requests         int64 `json:"requests,omitempty"`
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	ToolCalls        int64 `json:"tool_calls,omitempty"`
	// Details holds provider-specific counters.
	Details map[string]int64 `json:"details,omitempty"`
}

// RunStarted (run.started) records the start of an agent run.
type RunStarted struct {
	Agent string `json:"agent,omitempty"`
	// Input is what the run was started with (canonical JSON).
	Input       json.RawMessage `json:"input,omitempty"`
	ParentRunID string          `json:"parent_run_id,omitempty"`
	// ParentSessionID, ParentRunID, ParentToolCallID and Depth name the
	// call of another run that started this one as a sub-run (an agent
	// called as a tool): the parent's session, run and tool call, and how
	// deep the run is under the root run (1: a child of a root run).
	ParentSessionID  string `json:"parent_session_id,omitempty"`
	ParentToolCallID string `json:"parent_tool_call_id,omitempty"`
	Depth            int    `json:"depth,omitempty"`
	// Metadata is the run's metadata (a JSON object) after the run-start
	// hooks; tools see it in their context (optional).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// RunHandoff (run.handoff) records that the model handed the rest of the
// run over to another agent (a weft.Handoff tool): from the run.handoff
// on, the run's model, tools and instructions are the To agent's.
type RunHandoff struct {
	From string `json:"from"`
	To   string `json:"to"`
	// ToolCallID is the call of the handoff tool.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Version is the To agent's version the run goes on with (absent for
	// an unversioned agent).
	Version string `json:"version,omitempty"`
}

// RunWaiting (run.waiting) records that a run paused until approvals or
// deferred tool calls are resolved.
type RunWaiting struct {
	// Reason is "approval", "deferred" or both, comma-separated.
	Reason      string   `json:"reason"`
	ToolCallIDs []string `json:"tool_call_ids,omitempty"`
}

// RunResumed (run.resumed) records that a waiting run continued.
type RunResumed struct {
	ToolCallIDs []string `json:"tool_call_ids,omitempty"`
}

// RunCompleted (run.completed) records a run's successful end.
type RunCompleted struct {
	Output json.RawMessage `json:"output,omitempty"`
	Usage  *Usage          `json:"usage,omitempty"`
}

// RunFailed (run.failed) records a run's failed end.
type RunFailed struct {
	Error ErrorInfo `json:"error"`
	Usage *Usage    `json:"usage,omitempty"`
}

// RunCancelled (run.cancelled) records that a run was cancelled.
type RunCancelled struct {
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// ModelRequest (model.request) records a request sent to a model.
type ModelRequest struct {
	Model string `json:"model"`
	// Messages is the request's message list (canonical JSON).
	Messages json.RawMessage `json:"messages,omitempty"`
	// Tools names the tools offered to the model.
	Tools []string `json:"tools,omitempty"`
}

// ModelResponse (model.response) records a model's answer.
type ModelResponse struct {
	Model string `json:"model"`
	// Message is the response message (canonical JSON).
	Message      json.RawMessage `json:"message,omitempty"`
	FinishReason string          `json:"finish_reason,omitempty"`
	// ToolCallIDs are the ids of the tool calls the response asks for; each
	// has its own tool.requested event.
	ToolCallIDs []string `json:"tool_call_ids,omitempty"`
	Usage       *Usage   `json:"usage,omitempty"`
	// Attempts is how many times the request was sent before this answer
	// came, when a retrying model wrapper says so (llm.Response.Attempts);
	// omitted for one attempt or a model that does not count.
	Attempts int `json:"attempts,omitempty"`
	// OutputRejected is set when an output validator rejected the
	// response's final text: the message the model gets as a retry
	// prompt (optional).
	OutputRejected string `json:"output_rejected,omitempty"`
	// RequestAmended is set when model-request hooks changed the request
	// before it was sent: the digests of the request's JSON before and
	// after them (never the request itself; optional).
	RequestAmended *Amendment `json:"request_amended,omitempty"`
}

// Amendment records that hooks changed a value, by the "sha256:<hex>"
// digests of its JSON before and after.
type Amendment struct {
	DigestBefore string `json:"digest_before"`
	DigestAfter  string `json:"digest_after"`
}

// ToolRequested (tool.requested) records a tool call the model asked for.
//
// Arguments are the model's arguments as it sent them, when they are JSON.
// Arguments that are not valid JSON cannot be embedded in the event's
// data: they are kept as the string RawArguments (byte for byte for UTF-8
// text; a byte that is not UTF-8 becomes U+FFFD in the JSON), and
// Arguments is absent. At most one of the two is set.
type ToolRequested struct {
	Tool         string          `json:"tool"`
	Toolset      string          `json:"toolset,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments string          `json:"raw_arguments,omitempty"`
	// Parent is the call whose program made this call (code mode: a
	// call of run_code's program, id "<parent>.<n>"); "" for a call the
	// model made.
	Parent string `json:"parent,omitempty"`
}

// NewToolRequested returns the data of a tool.requested event for a call
// of tool in toolset with args as the model sent them: in Arguments when
// they are valid JSON, else in RawArguments. Empty or blank arguments are
// none (a tool reads no arguments as {}).
func NewToolRequested(tool, toolset string, args json.RawMessage) ToolRequested {
	d := ToolRequested{Tool: tool, Toolset: toolset}
	switch {
	case len(bytes.TrimSpace(args)) == 0:
	case json.Valid(args):
		d.Arguments = args
	default:
		d.RawArguments = string(args)
	}
	return d
}

// Args returns the call's arguments as the model sent them: Arguments, or
// the bytes of RawArguments when they were not JSON.
func (d ToolRequested) Args() json.RawMessage {
	if d.RawArguments != "" {
		return json.RawMessage(d.RawArguments)
	}
	return d.Arguments
}

// ToolStarted (tool.started) records that an attempt of a tool call began.
type ToolStarted struct {
	Tool    string `json:"tool"`
	Attempt int    `json:"attempt"`
	// Node is where the attempt runs, when not in the session's process.
	Node string `json:"node,omitempty"`
}

// ToolRetried (tool.retried) records that an attempt failed and another
// one is scheduled.
type ToolRetried struct {
	Tool    string    `json:"tool"`
	Attempt int       `json:"attempt"` // the attempt that failed
	Error   ErrorInfo `json:"error"`
	// Delay before the next attempt.
	Delay time.Duration `json:"delay_ns,omitempty"`
	// Arguments, when the retry changes them (canonical JSON).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolReturned (tool.returned) records a tool call's final return.
type ToolReturned struct {
	Tool string `json:"tool"`
	// Return is the canonical tool return (JSON, as the toolsets package
	// encodes it).
	Return  json.RawMessage `json:"return"`
	IsError bool            `json:"is_error,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	// Error is the error the tool returned (or the panic it raised), when
	// the return was built from one: the return's kind, the error's
	// message and its Go type (optional). The model saw the message only.
	Error *ErrorInfo `json:"error,omitempty"`
}

// ToolProgress (tool.progress) records progress reported by a running
// tool.
type ToolProgress struct {
	Tool     string  `json:"tool"`
	Message  string  `json:"message,omitempty"`
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	// Name and Data are a custom progress event a tool emitted
	// (toolsets.ToolContext.Emit), with the attempt it came from (optional).
	Name    string          `json:"name,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
}

// ApprovalRequested (approval.requested) records that a tool call needs a
// human decision before it runs.
type ApprovalRequested struct {
	Tool string `json:"tool"`
	// Arguments are the call's arguments as the person deciding is shown
	// them and as the approved call receives them: their canonical form
	// (toolsets.CanonicalArguments). Events recorded before weft wrote
	// that form hold the model's arguments as sent.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// Metadata describes the request (the tool's approval metadata,
	// optional).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ApprovalDecided (approval.decided) records the decision on an approval.
type ApprovalDecided struct {
	Approved bool   `json:"approved"`
	By       string `json:"by,omitempty"`
	// Authenticated is set when By is the principal of an authenticated
	// caller (an HTTP API bearer token); absent, By is free text the
	// client gave (the NATS path's --by), unauthenticated.
	Authenticated bool   `json:"authenticated,omitempty"`
	Reason        string `json:"reason,omitempty"`
	// Arguments replaces the call's arguments when the approver edited them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// DeferredRequested (deferred.requested) records a tool call whose result
// comes from outside the run (another system, a person).
type DeferredRequested struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// DeferredResolved (deferred.resolved) records the outside result of a
// deferred tool call.
type DeferredResolved struct {
	Return  json.RawMessage `json:"return"`
	IsError bool            `json:"is_error,omitempty"`
	// By says who supplied the result (optional).
	By string `json:"by,omitempty"`
	// Authenticated is ApprovalDecided's: By is an authenticated principal.
	Authenticated bool `json:"authenticated,omitempty"`
	// Usage is the usage of the work that produced the result (a
	// sub-run's), added to the run's (optional).
	Usage *Usage `json:"usage,omitempty"`
}

// ToolsetInitialized (toolset.initialized) records that a toolset started
// and which tools it offers.
type ToolsetInitialized struct {
	Toolset string   `json:"toolset"`
	Tools   []string `json:"tools,omitempty"`
	// ID, State, ToolCount, InstructionCount and Message are the
	// toolset's lifecycle report (optional): its stable id, the state the
	// transition left it in, what the preparation offered, and what
	// happened.
	ID               string `json:"id,omitempty"`
	State            string `json:"state,omitempty"`
	ToolCount        int    `json:"tool_count,omitempty"`
	InstructionCount int    `json:"instruction_count,omitempty"`
	Message          string `json:"message,omitempty"`
	// Digest sums up what the toolset offered at this step, free of
	// credentials (a live MCP toolset's hash of its listed tool names and
	// schemas); optional.
	Digest string `json:"digest,omitempty"`
}

// ToolsetRefreshed (toolset.refreshed) records a change of a toolset's
// tools.
type ToolsetRefreshed struct {
	Toolset string   `json:"toolset"`
	Tools   []string `json:"tools,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// ID, State, ToolCount, InstructionCount and Message are the
	// toolset's lifecycle report (optional): its stable id, the state the
	// transition left it in, what the preparation offered, and what
	// happened.
	ID               string `json:"id,omitempty"`
	State            string `json:"state,omitempty"`
	ToolCount        int    `json:"tool_count,omitempty"`
	InstructionCount int    `json:"instruction_count,omitempty"`
	Message          string `json:"message,omitempty"`
	// Digest sums up what the toolset offered at this step, free of
	// credentials (a live MCP toolset's hash of its listed tool names and
	// schemas); optional.
	Digest string `json:"digest,omitempty"`
}

// ToolsetClosed (toolset.closed) records that a toolset was shut down.
type ToolsetClosed struct {
	Toolset string `json:"toolset"`
	Reason  string `json:"reason,omitempty"`
	// ID, State, ToolCount, InstructionCount and Message are the
	// toolset's lifecycle report (optional): its stable id, the state the
	// transition left it in, what the preparation offered, and what
	// happened.
	ID               string `json:"id,omitempty"`
	State            string `json:"state,omitempty"`
	ToolCount        int    `json:"tool_count,omitempty"`
	InstructionCount int    `json:"instruction_count,omitempty"`
	Message          string `json:"message,omitempty"`
}

// ToolsetUnavailable (toolset.unavailable) records that a toolset cannot
// serve calls for now and may come back.
type ToolsetUnavailable struct {
	Toolset string    `json:"toolset"`
	Error   ErrorInfo `json:"error"`
	// RetryAt is when the runtime tries again, if it does.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// ID, State, ToolCount, InstructionCount and Message are the
	// toolset's lifecycle report (optional): its stable id, the state the
	// transition left it in, what the preparation offered, and what
	// happened.
	ID               string `json:"id,omitempty"`
	State            string `json:"state,omitempty"`
	ToolCount        int    `json:"tool_count,omitempty"`
	InstructionCount int    `json:"instruction_count,omitempty"`
	Message          string `json:"message,omitempty"`
}

// ToolsetFailed (toolset.failed) records that a toolset failed for good.
type ToolsetFailed struct {
	Toolset string    `json:"toolset"`
	Error   ErrorInfo `json:"error"`
	// ID, State, ToolCount, InstructionCount and Message are the
	// toolset's lifecycle report (optional): its stable id, the state the
	// transition left it in, what the preparation offered, and what
	// happened.
	ID               string `json:"id,omitempty"`
	State            string `json:"state,omitempty"`
	ToolCount        int    `json:"tool_count,omitempty"`
	InstructionCount int    `json:"instruction_count,omitempty"`
	Message          string `json:"message,omitempty"`
}

// ToolSearchInitialized (tool_search.initialized) records the tools a tool
// search can load.
type ToolSearchInitialized struct {
	Toolset    string   `json:"toolset,omitempty"`
	Searchable []string `json:"searchable,omitempty"`
}

// ToolSearchLoaded (tool_search.loaded) records tools loaded by a search.
type ToolSearchLoaded struct {
	Query string   `json:"query"`
	Tools []string `json:"tools"`
	// Toolset is the search (or proxy) toolset's name; Namespaces the ids
	// of the loaded tools' toolsets (optional).
	Toolset    string   `json:"toolset,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// ToolSearchNoMatch (tool_search.no_match) records a search that found
// nothing.
type ToolSearchNoMatch struct {
	Query string `json:"query"`
	// Toolset is the search (or proxy) toolset's name (optional).
	Toolset string `json:"toolset,omitempty"`
}

// ToolSearchFailed (tool_search.failed) records a search that failed.
type ToolSearchFailed struct {
	Query string    `json:"query"`
	Error ErrorInfo `json:"error"`
	// Toolset is the search (or proxy) toolset's name (optional).
	Toolset string `json:"toolset,omitempty"`
}

// ErrorHandlerRan (error_handler.ran) records that an error handler a
// tool call registered (in its tool.returned) ran, after its run failed
// or was cancelled: the call (the event's tool_call_id), the tool, the
// handler, why it ran ("failed" or "cancelled"), and its error if it
// failed.
type ErrorHandlerRan struct {
	Tool    string     `json:"tool"`
	Handler string     `json:"handler"`
	Reason  string     `json:"reason"`
	Error   *ErrorInfo `json:"error,omitempty"`
}

// UsageSnapshot (usage.snapshot) records cumulative usage at a point in a
// run or session.
type UsageSnapshot struct {
	// Scope is "run" or "session".
	Scope string `json:"scope,omitempty"`
	Usage Usage  `json:"usage"`
}

// DecisionRefused (decision.refused) records a resume command that the
// session refused: it changed nothing and ran nothing. It says who tried
// (each decision's By), what (the decisions as sent, and the run the
// command named) and why (Code and Message), so that an audit shows the
// decisions attempted as well as the ones taken.
type DecisionRefused struct {
	// Code is the refusal's machine-readable reason, the code of the
	// command error the caller got: "unknown_decision" (no pending item
	// has the id: unknown, or a call of another session),
	// "already_decided", "missing_decisions", "duplicate_decision",
	// "wrong_decision" (the action does not fit the item, or the reviewed
	// arguments or result are malformed or fail the tool's schema),
	// "not_waiting" or "unknown_run".
	Code string `json:"code"`
	// Message says why, for a person.
	Message string `json:"message"`
	// Run is the run id the command named when the session has no such
	// run (the event's run id is then empty).
	Run string `json:"run,omitempty"`
	// Decisions are the refused command's decisions, in the order sent.
	Decisions []RefusedDecision `json:"decisions,omitempty"`
}

// RefusedDecision is one decision of a refused resume, as it was sent.
type RefusedDecision struct {
	// ID is the pending item (tool call) the decision named.
	ID string `json:"id"`
	// Action is "approve", "deny", "complete" or "fail" (as sent).
	Action string `json:"action"`
	By     string `json:"by,omitempty"`
	// Authenticated is ApprovalDecided's: By is an authenticated principal.
	Authenticated bool   `json:"authenticated,omitempty"`
	Reason        string `json:"reason,omitempty"`
	// Arguments (reviewed arguments) and Result (a deferred call's value)
	// as sent, when they are JSON; a payload that is not JSON is left out
	// (the refusal's message says so).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
}
