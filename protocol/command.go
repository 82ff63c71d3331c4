package protocol

import (
	"encoding/json"

	"github.com/weft-run/weft/events"
)

// The session commands: the bodies of <root>.cmd.session.<id>.<verb> and
// of their replies, spoken by clients (weft decide, the facade of another
// process) and by the nodes that forward a command to the session's owner
// (<root>.node.<node>.cmd.session.<id>.<verb>). A node hands a command of
// its own process to the session's actor as the same Go value.

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

// Decision is a human or external decision on a pending item. It is also
// the body element of a resume command (see PROTOCOL in doc.go).
type Decision struct {
	// ID is the pending item's id: the tool call id.
	ID string `json:"id"`
	// Action is "approve", "deny", "complete" or "fail".
	Action string `json:"action"`
	// By says who decided.
	By string `json:"by,omitempty"`
	// Authenticated says that By is the principal a node's authenticating
	// front end (the HTTP API's bearer tokens) established, not free text
	// a client wrote. Only a node sets it: a client's resume command on
	// weft.cmd.session.<id>.resume that sets it is refused (bad_command).
	Authenticated bool `json:"authenticated,omitempty"`
	// Reason explains a denial or a failure; Note comments an approval.
	Reason string `json:"reason,omitempty"`
	// Arguments are the reviewed arguments of an approval (optional).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is a completed deferred call's value, or a failed one's
	// details (JSON): the failed return's content is then
	// {"error": message, "details": Result}. For an answer it is the
	// answer: {"action": "accept"|"decline"|"cancel", "content": {…}}.
	Result json.RawMessage `json:"result,omitempty"`
	// Usage is the usage of the work that produced a deferred call's
	// result (a sub-run's), added to the run's usage and counted against
	// its limits (optional; no field may be negative).
	Usage *events.Usage `json:"usage,omitempty"`
}

// The decision actions.
const (
	ActionApprove  = "approve"
	ActionDeny     = "deny"
	ActionComplete = "complete"
	ActionFail     = "fail"
	// ActionAnswer answers an elicitation (a call that asked a person for
	// input); Result is the answer.
	ActionAnswer = "answer"
)

// InboxPrefix is the prefix every reply subject of a command must have:
// the NATS inboxes ("_INBOX.…") and the role inboxes of bus.Role
// ("_INBOX_<role>.…"). An empty reply subject (no answer wanted) is
// allowed too.
const InboxPrefix = "_INBOX"
