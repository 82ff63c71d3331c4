package actors

// The session commands (PROTOCOL in doc.go): the bodies of
// <root>.cmd.session.<id>.<verb> and of their replies, spoken by clients
// and by the nodes that forward commands to a session's owner. The tool
// calls' wire is package protocol (see wire.go).

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
