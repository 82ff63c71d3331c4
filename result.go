package weft

import (
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// Status is where a run stands when Run, Resume or Wait return.
type Status = actors.RunStatus

// The statuses a Result can have.
const (
	StatusCompleted = actors.StatusCompleted
	StatusWaiting   = actors.StatusWaiting
	StatusFailed    = actors.StatusFailed
	StatusCancelled = actors.StatusCancelled
)

// PendingItem is a tool call that waits for a decision; see Pending.
type PendingItem = actors.PendingItem

// Pending lists what a waiting run waits for. Each item's ID is the tool
// call's id (unique among the run's pending items, stable across restarts);
// pass it to Approve, Deny, Complete or Fail.
type Pending struct {
	Approvals []PendingItem
	Deferred  []PendingItem
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
	// Err describes why a run failed (or was cancelled); nil otherwise.
	Err *RunError
}

// RunError is why a run failed: a kind (tool_retry_limit_exceeded, no_tools,
// usage_limit_exceeded, model_error, invalid_response, toolset_error,
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
	return &Result{SessionID: o.SessionID, RunID: o.RunID, Status: o.Status, Output: o.Output, Usage: o.Usage, Messages: o.Messages,
		Pending: pendingOf(o.Pending), Err: runErrorOf(o.RunID, o.Error)}
}

// pendingOf sorts a run's pending items by kind, keeping their order.
func pendingOf(items []actors.PendingItem) Pending {
	var p Pending
	for _, it := range items {
		if it.Kind == actors.PendingApproval {
			p.Approvals = append(p.Approvals, it)
		} else {
			p.Deferred = append(p.Deferred, it)
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

// Decision is a decision on a pending item; build it with Approve, Deny,
// Complete or Fail.
type Decision = actors.Decision

// Approve approves pending call id, decided by by. reviewedArgs, when not
// nil, replaces the call's arguments (a JSON object, validated like the
// model's).
func Approve(id, by string, reviewedArgs json.RawMessage) Decision {
	return Decision{ID: id, Action: actors.ActionApprove, By: by, Arguments: reviewedArgs}
}

// Deny denies pending call id; the model gets a denial return with reason.
func Deny(id, by, reason string) Decision {
	return Decision{ID: id, Action: actors.ActionDeny, By: by, Reason: reason}
}

// Complete supplies the result of deferred call id: result is encoded as
// JSON and becomes the call's return content. A result that cannot be
// encoded gives a decision the resume refuses (ErrWrongDecision).
func Complete(id, by string, result any) Decision {
	b, err := json.Marshal(result)
	if err != nil {
		b = []byte("{")
	}
	return Decision{ID: id, Action: actors.ActionComplete, By: by, Result: b}
}

// Fail fails deferred call id with reason; the model gets an error return.
func Fail(id, by, reason string) Decision {
	return Decision{ID: id, Action: actors.ActionFail, By: by, Reason: reason}
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
	ErrMissingDecisions  = actors.ErrMissingDecisions
	ErrWrongDecision     = actors.ErrWrongDecision
	// ErrClosed: the runtime was closed (Runtime.Close) while the call was
	// made or under way.
	ErrClosed = actors.ErrHostClosed
)
