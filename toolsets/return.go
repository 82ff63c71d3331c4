package toolsets

import "encoding/json"

// Return is the canonical outcome of one tool call, whatever happened: a
// success, a control-flow signal, a failure, an unknown tool. It is plain
// JSON-encodable data (it becomes event data).
//
// Model adapters must read only CallID, ToolName, IsError and
// [Return.ModelContent]; the other surfaces are for the application, the UI
// and the recorded evidence.
type Return struct {
	CallID   string `json:"call_id"`
	ToolName string `json:"tool_name"`
	Kind     Kind   `json:"kind"`
	// Success and IsError are the fixed flags of Kind (see [Kind.Flags]).
	Success bool `json:"success"`
	IsError bool `json:"is_error"`
	// Content is the tool's content as JSON: the result's Content for a
	// success, a JSON string explaining the outcome otherwise.
	Content json.RawMessage `json:"content,omitempty"`
	// ModelOverride is the result's ModelContent as JSON, when the tool gave
	// one; it replaces Content for the model.
	ModelOverride json.RawMessage `json:"model_content,omitempty"`
	// Metadata is public return metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Attempts is how many times the tool function ran for this call (0 when
	// it never ran: not found, not exposed, invalid arguments).
	Attempts int `json:"attempts"`
	// MaxAttempts is the call's budget: 1 + its resolved max retries.
	MaxAttempts int `json:"max_attempts"`
	// Control carries the control-flow payload of non-success kinds.
	Control *Control `json:"control,omitempty"`

	// AppValue is the result's application value as JSON. Never model-facing.
	AppValue json.RawMessage `json:"app_value,omitempty"`
	// UserContent is content for a user interface as JSON. Never model-facing.
	UserContent json.RawMessage `json:"user_content,omitempty"`
	// PrivateMetadata is debug evidence (panic stacks, host-only trace ids).
	// Never model-facing, never in Metadata.
	PrivateMetadata map[string]any `json:"private_metadata,omitempty"`

	// Value is the live Go value the tool returned (the Result's AppValue,
	// else its Content), for in-process application code. It is not encoded.
	Value any `json:"-"`
}

// Control is the control-flow payload of a [Return].
type Control struct {
	// Message is the human- and model-readable explanation.
	Message string `json:"message,omitempty"`
	// Field is the argument at fault, for invalid arguments.
	Field string `json:"field,omitempty"`
	// HowToFix tells the model how to proceed.
	HowToFix string `json:"how_to_fix,omitempty"`
	// Reason is the approval or deferral reason.
	Reason string `json:"reason,omitempty"`
	// Metadata is the approval request or deferred request metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ModelContent returns the JSON the model sees for this return: the
// model-content override when the tool gave one, else Content. It is the
// only content a model adapter should read.
func (r *Return) ModelContent() json.RawMessage {
	if r.ModelOverride != nil {
		return r.ModelOverride
	}
	return r.Content
}
