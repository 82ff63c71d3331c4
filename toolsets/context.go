package toolsets

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
)

// Caller says who asked for a call. The zero value is [CallerModel], the
// safer default: hidden tools refuse it.
type Caller uint8

const (
	// CallerModel: the call came from a model's tool-call request.
	CallerModel Caller = iota
	// CallerApplication: application code called the tool directly; hidden
	// tools accept it.
	CallerApplication
)

// String returns "model" or "application".
func (c Caller) String() string {
	switch c {
	case CallerModel:
		return "model"
	case CallerApplication:
		return "application"
	}
	return fmt.Sprintf("Caller(%d)", uint8(c))
}

// Approval is a human approval of a call that returned
// [KindApprovalRequired]. It is only ever present for an approved call;
// denials never reach the tool.
type Approval struct {
	// DecidedBy identifies who approved ("ui", a user id).
	DecidedBy string `json:"decided_by,omitempty"`
	// Note is the approver's comment.
	Note string `json:"note,omitempty"`
	// Arguments are the reviewed arguments; when set they replace the
	// model's arguments for this call (and are validated like them).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// DeferredResult is the external result supplied for a call that returned
// [KindCallDeferred], given to the tool when the call is resumed.
type DeferredResult struct {
	Value    json.RawMessage `json:"value,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// Progress is a custom progress event a tool emitted during a call.
type Progress struct {
	CallID   string          `json:"call_id"`
	ToolName string          `json:"tool_name"`
	Attempt  int             `json:"attempt"`
	Name     string          `json:"name"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Emitter receives progress events. Emit is called synchronously on the
// tool's goroutine and must not block for long; the runtime turns the events
// into log events.
type Emitter interface {
	Emit(Progress)
}

// EmitterFunc adapts a function to [Emitter].
type EmitterFunc func(Progress)

// Emit calls f(p).
func (f EmitterFunc) Emit(p Progress) { f(p) }

// ToolContext is the runtime state a tool sees during one attempt of one
// call. The registry builds a fresh one per attempt; a tool must not keep it
// after returning. Its exported fields are read-only by convention.
type ToolContext struct {
	// RunID, SessionID and ConversationID identify where the call happens.
	RunID          string
	SessionID      string
	ConversationID string
	// CallID is the tool call's id; ToolName the name it was called by.
	CallID   string
	ToolName string
	// Caller is who asked for the call.
	Caller Caller
	// Attempt is the registry's attempt of this call that is running: 1 on
	// the first attempt, 2 on the first internal retry (after an execution
	// failure), and so on. It is the attempt of the tool.started event.
	Attempt int
	// MaxAttempts is the call's internal budget: 1 + its resolved max
	// retries ([Return.MaxAttempts]).
	MaxAttempts int
	// ModelRetries is how many times the model has been asked to retry
	// this tool in this run before this call: the model_retry and
	// invalid_arguments returns of its earlier calls. 0 on the first call,
	// so a tool can ask the model to retry only the first time:
	//
	//	if tc.ModelRetries == 0 {
	//		return nil, toolsets.ModelRetry("check the date format first")
	//	}
	//
	// The runtime derives it from the run's events, so it is the same
	// after a recovery; the run allows MaxAttempts-1 model retries per
	// tool. Outside a run it is [Invocation.ModelRetries].
	ModelRetries int
	// Approval is the approval of this call when it was approved, else nil.
	Approval *Approval
	// Deferred is the external result when the call is resumed after
	// [KindCallDeferred], else nil.
	Deferred *DeferredResult
	// Elicitation is a person's answer when the call is resumed after
	// [KindElicitationRequired], else nil.
	Elicitation *Elicitation
	// Code is the journal and variables of a code-mode call, else nil.
	Code *CodeInput

	metadata map[string]any
	bound    map[string]any // live objects bound to parameters by name (convert.go)
	done     <-chan struct{}
	emitter  Emitter
}

// LastAttempt reports whether this attempt is the last the internal retry
// budget allows.
func (tc *ToolContext) LastAttempt() bool { return tc.Attempt >= tc.MaxAttempts }

// Metadata returns the run metadata value for key.
func (tc *ToolContext) Metadata(key string) (any, bool) {
	v, ok := tc.metadata[key]
	return v, ok
}

// AllMetadata iterates over the run metadata, a read-only view.
func (tc *ToolContext) AllMetadata() iter.Seq2[string, any] { return maps.All(tc.metadata) }

// Done returns a channel closed when the attempt should stop: the caller
// cancelled the call, or the attempt timed out. It is the Done channel of
// the ctx passed to the tool. It may be nil (never cancelled).
func (tc *ToolContext) Done() <-chan struct{} { return tc.done }

// IsCancelled reports, without blocking, whether the attempt should stop.
func (tc *ToolContext) IsCancelled() bool {
	select {
	case <-tc.done:
		return true
	default:
		return false
	}
}

// Emit sends a custom progress event named name, with data encoded as JSON,
// to the emitter the caller supplied on the invocation. Without an emitter
// it does nothing. It fails only when data cannot be encoded.
func (tc *ToolContext) Emit(name string, data any) error {
	if tc.emitter == nil {
		return nil
	}
	var raw json.RawMessage
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("emit %q: %w", name, err)
		}
		raw = b
	}
	tc.emitter.Emit(Progress{CallID: tc.CallID, ToolName: tc.ToolName, Attempt: tc.Attempt, Name: name, Data: raw})
	return nil
}
