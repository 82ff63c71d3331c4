package protocol

import (
	"errors"
	"fmt"
)

// Sentinel errors of the runtime. A *CommandError carries one of them (by
// its Code) across NATS, so callers in another process can branch on them
// with errors.Is too.
var (
	// ErrUnknownAgent: a start command names an agent the host does not know.
	ErrUnknownAgent = errors.New("weft: unknown agent")
	// ErrSessionBusy: a run was started while another run of the session is
	// running or waiting.
	ErrSessionBusy = errors.New("weft: session has an active run")
	// ErrUnknownRun: the command names a run the session does not have.
	ErrUnknownRun = errors.New("weft: unknown run")
	// ErrNotWaiting: resume of a run that is not waiting.
	ErrNotWaiting = errors.New("weft: run is not waiting")
	// ErrRunEnded: cancel of a run that has already ended.
	ErrRunEnded = errors.New("weft: run has ended")
	// ErrUnknownDecision: a decision names no pending item of the run.
	ErrUnknownDecision = errors.New("weft: decision for an unknown pending item")
	// ErrDuplicateDecision: two decisions name the same pending item.
	ErrDuplicateDecision = errors.New("weft: duplicate decision")
	// ErrAlreadyDecided: a decision names a call of the run that was
	// already decided (approved, denied, completed or failed) and is not
	// pending again.
	ErrAlreadyDecided = errors.New("weft: item already decided")
	// ErrMissingDecisions: a resume leaves pending items undecided.
	ErrMissingDecisions = errors.New("weft: pending items without a decision")
	// ErrWrongDecision: the decision does not fit the item (approve on a
	// deferred call, complete on an approval), or is malformed, or its
	// reviewed arguments do not fit the tool's parameters schema.
	ErrWrongDecision = errors.New("weft: decision does not fit the pending item")
	// ErrBadCommand: a command body could not be decoded or is invalid.
	ErrBadCommand = errors.New("weft: bad command")
	// ErrInternal: the session could not carry out the command (a store
	// failure, a conflicting writer).
	ErrInternal = errors.New("weft: internal error")
	// ErrUnavailable: the session's event store or lease bucket failed
	// for a moment (JetStream restarting, a timeout). The command was not
	// carried out and nothing was recorded: retry it. It also matches
	// ErrInternal, the code such failures had before.
	ErrUnavailable = fmt.Errorf("weft: session temporarily unavailable (%w)", ErrInternal)
	// ErrHostClosed: the host was closed; it takes no more commands. It is
	// returned locally only (never sent as a command error's code).
	ErrHostClosed = errors.New("weft: host closed")
)

var codes = map[string]error{
	"unknown_agent":      ErrUnknownAgent,
	"session_busy":       ErrSessionBusy,
	"unknown_run":        ErrUnknownRun,
	"not_waiting":        ErrNotWaiting,
	"run_ended":          ErrRunEnded,
	"unknown_decision":   ErrUnknownDecision,
	"duplicate_decision": ErrDuplicateDecision,
	"already_decided":    ErrAlreadyDecided,
	"missing_decisions":  ErrMissingDecisions,
	"wrong_decision":     ErrWrongDecision,
	"bad_command":        ErrBadCommand,
	"internal":           ErrInternal,
	"unavailable":        ErrUnavailable,
	"session_owned":      ErrSessionOwned,
	"session_damaged":    ErrSessionDamaged,
}

// CommandError is the typed error of a refused command: the command's verb
// and session, a machine-readable Code (see PROTOCOL in doc.go) and a
// message. It matches the sentinel of its code with errors.Is.
type CommandError struct {
	Verb      string `json:"verb,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s session %q: %s", e.Verb, e.SessionID, e.Message)
}

// Unwrap returns the sentinel of the error's code.
func (e *CommandError) Unwrap() error {
	if s, ok := codes[e.Code]; ok {
		return s
	}
	return ErrInternal
}

// NewCommandError builds a *CommandError for sentinel with a message.
func NewCommandError(verb, session string, sentinel error, format string, args ...any) *CommandError {
	code := "internal"
	for c, s := range codes {
		if s == sentinel {
			code = c
			break
		}
	}
	return &CommandError{Verb: verb, SessionID: session, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrSessionOwned is the sentinel of the session_owned command error: the
// host the command was forwarded to no longer owns the session (its lease
// moved). The caller retries the command.
var ErrSessionOwned = errors.New("weft: session is owned by another node")

// ErrSessionDamaged: a session's stream holds poison (a stored message
// that is not a weft event, an event that does not decode), events its
// fold refuses, or events a damaged store cannot give back. A node does not
// carry such a session on; a command to
// it is answered with the code session_damaged. It matches ErrInternal.
var ErrSessionDamaged = fmt.Errorf("weft: session damaged (%w)", ErrInternal)
