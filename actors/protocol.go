package actors

import "github.com/weft-run/weft/protocol"

// The session commands' wire is package protocol (command.go,
// command_error.go); actors keeps its names, so that the runtime's callers
// branch on the same values (errors.Is works across the two names).

// The command messages.
type (
	StartCommand  = protocol.StartCommand
	ResumeCommand = protocol.ResumeCommand
	CancelCommand = protocol.CancelCommand
	CommandReply  = protocol.CommandReply
	Decision      = protocol.Decision
	CommandError  = protocol.CommandError
)

// The verbs, decision actions and the reply subjects' prefix.
const (
	ActionApprove  = protocol.ActionApprove
	ActionComplete = protocol.ActionComplete
	ActionDeny     = protocol.ActionDeny
	ActionFail     = protocol.ActionFail
	ActionAnswer   = protocol.ActionAnswer
	VerbCancel     = protocol.VerbCancel
	VerbResume     = protocol.VerbResume
	VerbStart      = protocol.VerbStart
	InboxPrefix    = protocol.InboxPrefix
)

// The sentinels of the command errors' codes.
var (
	ErrAlreadyDecided    = protocol.ErrAlreadyDecided
	ErrBadCommand        = protocol.ErrBadCommand
	ErrDuplicateDecision = protocol.ErrDuplicateDecision
	ErrHostClosed        = protocol.ErrHostClosed
	ErrInternal          = protocol.ErrInternal
	ErrMissingDecisions  = protocol.ErrMissingDecisions
	ErrNotWaiting        = protocol.ErrNotWaiting
	ErrRunEnded          = protocol.ErrRunEnded
	ErrSessionBusy       = protocol.ErrSessionBusy
	ErrUnavailable       = protocol.ErrUnavailable
	ErrUnknownAgent      = protocol.ErrUnknownAgent
	ErrUnknownDecision   = protocol.ErrUnknownDecision
	ErrUnknownRun        = protocol.ErrUnknownRun
	ErrWrongDecision     = protocol.ErrWrongDecision
	ErrSessionOwned      = protocol.ErrSessionOwned
	ErrSessionDamaged    = protocol.ErrSessionDamaged
)

// commandError builds a *CommandError for sentinel with a message.
func commandError(verb, session string, sentinel error, format string, args ...any) *CommandError {
	return protocol.NewCommandError(verb, session, sentinel, format, args...)
}
