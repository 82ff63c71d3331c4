package weft

import (
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// Status is where a run stands: running, or settled (waiting for
// decisions, completed, failed or cancelled). The set is closed.
type Status string

// The run statuses. Run, Resume and Wait return settled runs only; a
// SessionStatus may show a run that is running.
const (
	StatusRunning   Status = "running"
	StatusWaiting   Status = "waiting"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Settled reports whether a run in status s is not running: it waits for
// decisions or has ended.
func (s Status) Settled() bool { return s != StatusRunning && s != "" }

// Ended reports whether s is a final status (completed, failed or
// cancelled).
func (s Status) Ended() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// PendingKind says what a pending item waits for. The set is closed.
type PendingKind string

// The pending kinds.
const (
	// PendingApproval: a human approves or denies the call (Approve, Deny).
	PendingApproval PendingKind = "approval"
	// PendingDeferred: something outside the run supplies the call's
	// result (Complete, Fail, FailWith).
	PendingDeferred PendingKind = "deferred"
	// PendingElicitation: the call asks a person for input (an MCP
	// server's elicitation): Reason is its message and Metadata holds the
	// JSON Schema the answer must fit under "requested_schema" (Answer).
	PendingElicitation PendingKind = "elicitation"
)

// PendingItem is a tool call that waits for a decision; see Pending.
type PendingItem struct {
	// ID is the tool call's id: the id a Decision names.
	ID   string      `json:"id"`
	Kind PendingKind `json:"kind"`
	Tool string      `json:"tool"`
	// Toolset is the name of the tool's toolset ("" for a loose tool).
	Toolset   string          `json:"toolset,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason and Metadata are the approval request's or the deferral's.
	Reason   string         `json:"reason,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Pending lists what a waiting run waits for. Each item's ID is the tool
// call's id (unique among the run's pending items, stable across restarts);
// pass it to Approve, Deny, Complete, Fail or Answer.
type Pending struct {
	Approvals    []PendingItem
	Deferred     []PendingItem
	Elicitations []PendingItem
}

// Result is a run's outcome when it completed, failed, was cancelled or
// waits for decisions.
type Result struct {
	SessionID string
	RunID     string
	Status    Status
	// Output is the model's final text (completed runs).
	Output string
	// Usage is what the run consumed.
	Usage events.Usage
	// Messages is the session's message history when the run settled:
	// the conversation of the session's earlier runs, then this run's
	// prompt, the model's responses and the tool returns — what the next
	// model request of the session would see. It is the session's, not
	// only the run's: the run's own messages are the tail that follows the
	// history it started on. A run that ended with tool calls still open
	// (failed or cancelled mid-batch) has that trailing response dropped,
	// so that the history stays a valid conversation.
	Messages []llm.Message
	// Pending is what a waiting run waits for.
	Pending Pending
	// Subruns are the items of the run's sub-runs (AgentTool) that wait
	// for a person, with their parent chains; Session.Settle fills it.
	Subruns []SubrunItem
	// Err describes why a run failed (or was cancelled); nil otherwise.
	Err *RunError
}

// RunError is why a run failed: a kind (tool_retry_limit_exceeded, no_tools,
// usage_limit_exceeded, model_error, invalid_response, toolset_error,
// policy_error (an approval or deferral entry that matches nothing),
// payload_too_large (a model response over Config.MaxPayloadBytes, or
// events the store refused as too large), panic (the session's handling
// of the run panicked: the message holds the panic's value),
// internal; "cancelled" for a cancelled run) and a message.
type RunError struct {
	RunID   string
	Kind    string
	Message string
}

func (e *RunError) Error() string {
	return fmt.Sprintf("weft: run %s: %s: %s", e.RunID, e.Kind, e.Message)
}

func resultOf(o actors.Outcome) *Result {
	return &Result{SessionID: o.SessionID, RunID: o.RunID, Status: Status(o.Status), Output: o.Output, Usage: o.Usage, Messages: o.Messages,
		Pending: pendingOf(o.Pending), Err: runErrorOf(o.RunID, o.Error)}
}

// pendingOf sorts a run's pending items by kind, keeping their order.
// pendingItemOf is the facade's view of a pending item.
func pendingItemOf(it actors.PendingItem) PendingItem {
	return PendingItem{ID: it.ID, Kind: PendingKind(it.Kind), Tool: it.Tool, Toolset: it.Toolset, Arguments: it.Arguments,
		Reason: it.Reason, Metadata: it.Metadata}
}

func pendingOf(items []actors.PendingItem) Pending {
	var p Pending
	for _, it := range items {
		item := pendingItemOf(it)
		switch item.Kind {
		case PendingApproval:
			p.Approvals = append(p.Approvals, item)
		case PendingElicitation:
			p.Elicitations = append(p.Elicitations, item)
		default:
			p.Deferred = append(p.Deferred, item)
		}
	}
	return p
}

// runErrorOf is the RunError of a run's recorded error (nil: none).
func runErrorOf(runID string, e *events.ErrorInfo) *RunError {
	if e == nil {
		return nil
	}
	return &RunError{RunID: runID, Kind: e.Kind, Message: e.Message}
}

// Errors of sessions and resumes, matched with errors.Is.
var (
	ErrUnknownAgent      = actors.ErrUnknownAgent
	ErrSessionBusy       = actors.ErrSessionBusy
	ErrUnknownRun        = actors.ErrUnknownRun
	ErrNotWaiting        = actors.ErrNotWaiting
	ErrRunEnded          = actors.ErrRunEnded
	ErrUnknownDecision   = actors.ErrUnknownDecision
	ErrDuplicateDecision = actors.ErrDuplicateDecision
	ErrAlreadyDecided    = actors.ErrAlreadyDecided
	ErrMissingDecisions  = actors.ErrMissingDecisions
	ErrWrongDecision     = actors.ErrWrongDecision
	// ErrUnavailable: the session's event store or lease bucket failed, or
	// its actor stopped without recording the end of a run it drove (a
	// panic whose failure could not be appended): Run, Resume and Wait
	// return it rather than wait for a run nobody drives. Retry: the
	// session's next command rebuilds its actor from the log, which
	// carries the run on.
	ErrUnavailable = actors.ErrUnavailable
	// ErrClosed: the runtime was closed (Runtime.Close) while the call was
	// made or under way.
	ErrClosed = actors.ErrHostClosed
	// ErrNoLeases: Runtime.WatchTakeovers on a runtime without session
	// leases (the embedded server, a single node).
	ErrNoLeases = actors.ErrNoLeases
)
