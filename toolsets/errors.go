package toolsets

import (
	"errors"
	"fmt"
	"maps"
	"time"
)

// Sentinel errors for registration and construction problems. The typed
// errors below match them with errors.Is.
var (
	// ErrInvalidName: a tool or toolset name breaks the naming rule.
	ErrInvalidName = errors.New("toolsets: invalid name")
	// ErrInvalidSchema: a parameters schema was rejected.
	ErrInvalidSchema = errors.New("toolsets: invalid parameters schema")
	// ErrMissingDescription: a strict tool has no description.
	ErrMissingDescription = errors.New("toolsets: strict tool without description")
	// ErrDuplicateTool: two tools share a name in one toolset or registry.
	ErrDuplicateTool = errors.New("toolsets: duplicate tool name")
	// ErrInvalidDefinition: some other field of a definition is invalid.
	ErrInvalidDefinition = errors.New("toolsets: invalid tool definition")
)

// DefinitionError reports why a tool could not be built or registered. It
// names the tool (and toolset when there is one) and unwraps to its cause,
// usually one of the sentinels above or a [*SchemaError].
type DefinitionError struct {
	Toolset string // empty when the tool is not in a toolset
	Tool    string
	Err     error
}

func (e *DefinitionError) Error() string {
	if e.Toolset != "" {
		return fmt.Sprintf("tool %q in toolset %q: %v", e.Tool, e.Toolset, e.Err)
	}
	return fmt.Sprintf("tool %q: %v", e.Tool, e.Err)
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// The control-flow errors below are how a tool steers the runtime. The
// registry recognises them with errors.As on these concrete types only (so a
// wrapped one still counts); any other error, whatever its name, is an
// Execution failure. [KindOf] gives the mapping.

// InvalidArgumentsError reports arguments that do not fit the tool. The
// registry produces it when validation fails; a tool may return it for
// semantic checks the schema cannot express.
type InvalidArgumentsError struct {
	// Field is the argument path at fault ("ticket_id", "items[2].sku"),
	// empty when the whole argument object is at fault.
	Field string
	// Message says what is wrong.
	Message string
	// HowToFix tells the model what to change.
	HowToFix string
}

// InvalidArguments returns an [*InvalidArgumentsError] for field.
func InvalidArguments(field, message, howToFix string) error {
	return &InvalidArgumentsError{Field: field, Message: message, HowToFix: howToFix}
}

func (e *InvalidArgumentsError) Error() string {
	if e.HowToFix == "" {
		return "invalid arguments: " + e.Message
	}
	return "invalid arguments: " + e.Message + " " + e.HowToFix
}

// ModelRetryError asks the model to retry the call, guided by Message.
type ModelRetryError struct{ Message string }

// ModelRetry returns a [*ModelRetryError].
func ModelRetry(message string) error { return &ModelRetryError{Message: message} }

func (e *ModelRetryError) Error() string { return "model retry: " + e.Message }

// FeedbackError is agent-readable guidance for an expected, correctable
// condition (a missing file, an unsupported format, an HTTP 404, a policy
// denial). Its return has success false and is_error false.
type FeedbackError struct {
	Message  string
	Metadata map[string]any // public return metadata, merged into the return
}

// Feedback returns a [*FeedbackError].
func Feedback(message string) error { return &FeedbackError{Message: message} }

func (e *FeedbackError) Error() string { return "feedback: " + e.Message }

// UserError reports application or integration code using a tool
// incorrectly (a missing dependency, a direct call that needs runtime
// wiring). It is an error, and is never retried by the model or internally.
type UserError struct {
	Message string
	Err     error // optional cause
}

// NewUserError returns a [*UserError] with an optional cause.
func NewUserError(message string, cause error) error {
	return &UserError{Message: message, Err: cause}
}

func (e *UserError) Error() string {
	if e.Err != nil {
		return "user error: " + e.Message + ": " + e.Err.Error()
	}
	return "user error: " + e.Message
}

func (e *UserError) Unwrap() error { return e.Err }

// ApprovalRequiredError suspends the call until a human approves it. The
// tool is called again on resume with [ToolContext.Approval] set.
type ApprovalRequiredError struct {
	Reason   string
	Metadata map[string]any
}

// ApprovalRequired returns an [*ApprovalRequiredError]. metadata is copied.
func ApprovalRequired(reason string, metadata map[string]any) error {
	return &ApprovalRequiredError{Reason: reason, Metadata: maps.Clone(metadata)}
}

func (e *ApprovalRequiredError) Error() string { return "approval required: " + e.Reason }

// ErrInvalidElicitAnswer is matched by the error of an answer to an
// elicitation that does not fit it (CheckElicitAnswer).
var ErrInvalidElicitAnswer = errors.New("toolsets: the answer does not fit the elicitation")

// CallDeferredError suspends the call until an external result is
// supplied. Metadata describes the request for whoever completes it.
type CallDeferredError struct {
	Reason   string
	Metadata map[string]any
}

// CallDeferred returns a [*CallDeferredError]. metadata is copied.
func CallDeferred(reason string, metadata map[string]any) error {
	return &CallDeferredError{Reason: reason, Metadata: maps.Clone(metadata)}
}

func (e *CallDeferredError) Error() string { return "call deferred: " + e.Reason }

// CancelledError reports a cooperatively cancelled call. The registry
// produces it when the caller's context is cancelled (Reason is the
// context's cause); a tool may return it itself. A cancelled call is not
// retried.
type CancelledError struct{ Reason string }

func (e *CancelledError) Error() string {
	if e.Reason == "" {
		return "cancelled"
	}
	return "cancelled: " + e.Reason
}

// TimeoutError reports an attempt that ran past its timeout. The registry
// produces it with Limit set to the setting the timeout came from; a tool
// may return one itself (Limit empty).
type TimeoutError struct {
	// After is the timeout that passed (0 for the caller's deadline).
	After time.Duration
	// Limit says which setting set the timeout, "" when unknown.
	Limit TimeoutLimit
}

func (e *TimeoutError) Error() string {
	var s string
	if e.Limit == LimitCaller {
		s = "timed out: the deadline of the caller's context passed"
	} else {
		s = fmt.Sprintf("timed out after %s", e.After)
	}
	if h := e.Limit.hint(); h != "" {
		s += " (" + h + ")"
	}
	return s
}

// TimeoutLimit names where a per-attempt timeout was set, so that a
// timeout's message can say how to raise it. The set is closed.
type TimeoutLimit string

// The timeout limits, in the registry's order of precedence.
const (
	// LimitTool: the tool's own timeout ([WithTimeout] on the tool,
	// [Definition.Timeout]).
	LimitTool TimeoutLimit = "tool"
	// LimitToolset: its toolset's default ([WithTimeout] on the toolset,
	// [ToolsetInfo.Timeout]).
	LimitToolset TimeoutLimit = "toolset"
	// LimitRegistry: the registry's default ([WithDefaultTimeout]; an
	// agent's AgentConfig.Timeout).
	LimitRegistry TimeoutLimit = "registry"
	// LimitCaller: the deadline of the context the call was made with.
	LimitCaller TimeoutLimit = "caller"
)

func (l TimeoutLimit) hint() string {
	switch l {
	case LimitTool:
		return "the tool's timeout: raise it with toolsets.WithTimeout on the tool"
	case LimitToolset:
		return "the toolset's default timeout: raise it with toolsets.WithTimeout on the toolset, or set one on the tool"
	case LimitRegistry:
		return "the registry's default timeout: raise it with toolsets.WithDefaultTimeout (AgentConfig.Timeout for an agent), or set one on the tool or its toolset"
	case LimitCaller:
		return "give the call a later deadline"
	}
	return ""
}

// KindOf returns the canonical return kind for an error a tool returned:
// nil is [KindSuccess]; the control-flow types above (found with errors.As)
// map to their kinds; anything else is [KindExecution]. KindOf looks at
// the error only: context.Canceled and context.DeadlineExceeded are
// execution failures here. The registry maps them (and any other error)
// to cancelled or timeout when the attempt's context has ended; see
// [Registry].
func KindOf(err error) Kind {
	if err == nil {
		return KindSuccess
	}
	var (
		ia *InvalidArgumentsError
		mr *ModelRetryError
		fb *FeedbackError
		ue *UserError
		ar *ApprovalRequiredError
		cd *CallDeferredError
		el *ElicitationRequiredError
		ce *CancelledError
		te *TimeoutError
	)
	switch {
	case errors.As(err, &ia):
		return KindInvalidArguments
	case errors.As(err, &mr):
		return KindModelRetry
	case errors.As(err, &fb):
		return KindFeedback
	case errors.As(err, &ue):
		return KindUserError
	case errors.As(err, &ar):
		return KindApprovalRequired
	case errors.As(err, &cd):
		return KindCallDeferred
	case errors.As(err, &el):
		return KindElicitationRequired
	case errors.As(err, &ce):
		return KindCancelled
	case errors.As(err, &te):
		return KindTimeout
	}
	return KindExecution
}
