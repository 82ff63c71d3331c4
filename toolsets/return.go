package toolsets

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

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
	// Hooks records what the call's hooks did, when they did anything:
	// stage, hook, action and digests, never values (see [Hook]).
	Hooks []HookRecord `json:"hooks,omitempty"`

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

// control finishes a non-success return whose content is its message.
func (ret Return) control(kind Kind, c *Control) Return {
	f := kind.Flags()
	ret.Kind, ret.Success, ret.IsError, ret.Control = kind, f.Success, f.IsError, c
	text := c.Message
	if c.HowToFix != "" {
		text += " " + c.HowToFix
	}
	ret.Content, _ = json.Marshal(text) // a string always encodes
	return ret
}

// fromError builds the return for a failed last attempt, capturing the
// tool's own error (out.tool) in private metadata.
func (ret Return) fromError(out outcome) Return {
	err := out.err
	kind := KindOf(err)
	c := &Control{Message: err.Error()}
	switch kind {
	case KindInvalidArguments:
		ia := asType[*InvalidArgumentsError](err)
		c = &Control{Message: ia.Message, Field: ia.Field, HowToFix: ia.HowToFix}
		if c.HowToFix == "" {
			c.HowToFix = "Correct the arguments and call the tool again."
		}
	case KindModelRetry:
		c = &Control{Message: asType[*ModelRetryError](err).Message, HowToFix: "Follow the message and call the tool again."}
	case KindFeedback:
		fb := asType[*FeedbackError](err)
		c = &Control{Message: fb.Message}
		ret.Metadata = fb.Metadata
	case KindUserError:
		c = &Control{Message: err.Error()}
	case KindApprovalRequired:
		ar := asType[*ApprovalRequiredError](err)
		c = &Control{Message: "approval required: " + ar.Reason, Reason: ar.Reason, Metadata: ar.Metadata}
	case KindCallDeferred:
		cd := asType[*CallDeferredError](err)
		c = &Control{Message: "call deferred: " + cd.Reason, Reason: cd.Reason, Metadata: cd.Metadata}
	case KindElicitationRequired:
		el := asType[*ElicitationRequiredError](err)
		meta := maps.Clone(el.Metadata)
		if len(el.Schema) > 0 {
			if meta == nil {
				meta = map[string]any{}
			}
			meta[MetaElicitationSchema] = el.Schema
		}
		c = &Control{Message: "input required: " + el.Message, Reason: el.Message, Metadata: meta}
	case KindCancelled:
		c = &Control{Message: fmt.Sprintf("tool %q: %v. The call did not finish and is not retried: a new run is needed to run it again.", ret.ToolName, err)}
	case KindTimeout:
		c = &Control{Message: fmt.Sprintf("tool %q: %v. The call is not retried.", ret.ToolName, err)}
	case KindExecution:
		c = &Control{Message: fmt.Sprintf("tool %q failed after %d attempt(s): %v", ret.ToolName, ret.Attempts, err)}
		if p, ok := err.(*panicError); ok {
			ret.PrivateMetadata = map[string]any{"panic": fmt.Sprint(p.value), "stack": string(out.stack)}
		}
	}
	if kind.Flags().IsError {
		ret.capture(out.tool)
	}
	return ret.control(kind, c)
}

func asType[T error](err error) T {
	var t T
	_ = errors.As(err, &t)
	return t
}

// success builds the return for a value the tool returned.
func (ret Return) success(val any) Return {
	var res Result
	switch v := val.(type) {
	case Result:
		res = v
	case *Result:
		if v != nil {
			res = *v
		}
	default:
		res.Content = val
	}
	ret.Kind, ret.Success, ret.IsError = KindSuccess, true, false
	if res.Failed {
		// The tool's own failure report: every surface is kept, and it
		// is not retried (it is a value, not an error).
		ret.Kind, ret.Success, ret.IsError = KindExecution, false, true
	}
	ret.Metadata, ret.PrivateMetadata = res.Metadata, res.PrivateMetadata
	ret.Value = res.AppValue
	if ret.Value == nil {
		ret.Value = res.Content
	}
	for _, s := range []struct {
		dst  *json.RawMessage
		v    any
		name string
	}{{&ret.Content, res.Content, "content"}, {&ret.ModelOverride, res.ModelContent, "model content"}, {&ret.AppValue, res.AppValue, "app value"}, {&ret.UserContent, res.UserContent, "user content"}} {
		if s.v == nil {
			continue
		}
		b, err := json.Marshal(s.v)
		if err != nil {
			failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts}
			return failed.fromError(outcome{err: NewUserError(fmt.Sprintf("the tool's %s is not JSON-encodable", s.name), err)})
		}
		*s.dst = b
	}
	for name, m := range map[string]map[string]any{"metadata": ret.Metadata, "private metadata": ret.PrivateMetadata} {
		if m == nil {
			continue
		}
		if _, err := json.Marshal(m); err != nil {
			failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts}
			return failed.fromError(outcome{err: NewUserError(fmt.Sprintf("the tool's %s is not JSON-encodable", name), err)})
		}
	}
	return ret
}
