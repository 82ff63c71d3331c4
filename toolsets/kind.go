package toolsets

import "fmt"

// Kind is the canonical kind of a tool [Return]. The set is closed: the
// constants below are the only valid values, and decoding any other string
// is an error.
type Kind string

// The canonical return kinds.
const (
	// KindSuccess: the tool ran and returned a value.
	KindSuccess Kind = "success"
	// KindNotFound: no tool has the requested name.
	KindNotFound Kind = "not_found"
	// KindNotExposed: the tool exists but is hidden from the model, and the
	// model called it.
	KindNotExposed Kind = "not_exposed"
	// KindInvalidArguments: the arguments failed validation (or the tool
	// returned an [InvalidArgumentsError]); the model should call again with
	// corrected arguments.
	KindInvalidArguments Kind = "invalid_arguments"
	// KindModelRetry: the tool asked the model to retry the call with the
	// given message ([ModelRetryError]).
	KindModelRetry Kind = "model_retry"
	// KindFeedback: expected, correctable condition reported as guidance
	// ([FeedbackError]); not an error.
	KindFeedback Kind = "feedback"
	// KindUserError: application or integration code used the tool
	// incorrectly ([UserError]); never retried.
	KindUserError Kind = "user_error"
	// KindExecution: unexpected failure (any other error, or a panic);
	// retried internally within the retry budget. It is also the kind of
	// a [Result] the tool marked as Failed, which is the tool's final
	// answer and is never retried (see [Result]).
	KindExecution Kind = "execution"
	// KindApprovalRequired: the call needs human approval before it runs
	// ([ApprovalRequiredError]); the run suspends.
	KindApprovalRequired Kind = "approval_required"
	// KindCallDeferred: the result will be supplied externally
	// ([CallDeferredError]); the run suspends.
	KindCallDeferred Kind = "call_deferred"
	// KindElicitationRequired: the tool asks a person for input
	// ([ElicitationRequiredError]); the run suspends, and the tool runs
	// again with the answer.
	KindElicitationRequired Kind = "elicitation_required"
	// KindCancelled: the call was cancelled cooperatively ([CancelledError],
	// or an error the tool returned after the caller's context was
	// cancelled). Never retried: a new run is needed to run the call again.
	KindCancelled Kind = "cancelled"
	// KindTimeout: the attempt exceeded its timeout ([TimeoutError], or an
	// error the tool returned after its attempt's deadline passed). Never
	// retried: the message names the limit and the setting that raises it.
	KindTimeout Kind = "timeout"
)

// Flags are the fixed properties of a [Kind].
type Flags struct {
	// Success reports that the tool produced its result.
	Success bool
	// IsError is the is_error flag shown to the model.
	IsError bool
	// ModelRetryable reports that the model is expected to call again
	// (corrected arguments, another tool, or following the message).
	ModelRetryable bool
	// InternallyRetryable reports that the registry re-runs the same call
	// itself, within the retry budget, before returning, when an attempt
	// fails with an error of this kind. Only [KindExecution] has it, as in
	// the seed; a value the tool returned is never retried.
	InternallyRetryable bool
	// HowToFix reports that the return carries a how-to-fix hint for the
	// model.
	HowToFix bool
	// Suspends reports that the run waits for a human decision or an
	// external result.
	Suspends bool
}

var kindFlags = map[Kind]Flags{
	KindSuccess:             {Success: true},
	KindNotFound:            {IsError: true, ModelRetryable: true, HowToFix: true},
	KindNotExposed:          {IsError: true, ModelRetryable: true, HowToFix: true},
	KindInvalidArguments:    {IsError: true, ModelRetryable: true, HowToFix: true},
	KindModelRetry:          {IsError: true, ModelRetryable: true, HowToFix: true},
	KindFeedback:            {},
	KindUserError:           {IsError: true},
	KindExecution:           {IsError: true, InternallyRetryable: true},
	KindApprovalRequired:    {Suspends: true},
	KindCallDeferred:        {Suspends: true},
	KindElicitationRequired: {Suspends: true},
	KindCancelled:           {IsError: true},
	KindTimeout:             {IsError: true},
}

// Kinds returns every valid kind, in a fixed order.
func Kinds() []Kind {
	return []Kind{
		KindSuccess, KindNotFound, KindNotExposed, KindInvalidArguments,
		KindModelRetry, KindFeedback, KindUserError, KindExecution,
		KindApprovalRequired, KindCallDeferred, KindElicitationRequired, KindCancelled, KindTimeout,
	}
}

// Valid reports whether k is one of the canonical kinds.
func (k Kind) Valid() bool {
	_, ok := kindFlags[k]
	return ok
}

// Flags returns the fixed flags of k. An invalid kind has zero flags.
func (k Kind) Flags() Flags { return kindFlags[k] }

// String returns the kind's wire name.
func (k Kind) String() string { return string(k) }

// UnmarshalText decodes a kind, rejecting any string outside the set.
func (k *Kind) UnmarshalText(b []byte) error {
	v := Kind(b)
	if !v.Valid() {
		return fmt.Errorf("toolsets: unknown return kind %q", b)
	}
	*k = v
	return nil
}

// MarshalText encodes a kind, rejecting any value outside the set.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("toolsets: unknown return kind %q", string(k))
	}
	return []byte(k), nil
}
