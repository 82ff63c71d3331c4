package toolsets

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Elicitation actions: what a person answered to an elicitation (the MCP
// names).
const (
	// ElicitAccept: the person submitted the requested input (Content).
	ElicitAccept = "accept"
	// ElicitDecline: the person explicitly declined to give it.
	ElicitDecline = "decline"
	// ElicitCancel: the person dismissed the request without choosing.
	ElicitCancel = "cancel"
)

// MetaElicitationSchema is the metadata key under which an elicitation's
// requested schema travels in its return's Control.Metadata.
const MetaElicitationSchema = "requested_schema"

// ElicitationRequiredError suspends the call until a person answers a
// question: the tool asks (Message) for input that fits a JSON Schema
// (Schema: an object schema, or none for a plain confirmation), the run
// waits with the call pending in the HITL queue, and once answered the
// tool is called again with [ToolContext.Elicitation] set. Metadata is
// kept with the request and given back with the answer (e.g. a server's
// request state); it is recorded, so it must hold no credentials.
type ElicitationRequiredError struct {
	Message  string
	Schema   json.RawMessage
	Metadata map[string]any
}

// ElicitationRequired returns an [*ElicitationRequiredError]. schema must
// be empty or a JSON object; metadata is copied.
func ElicitationRequired(message string, schema json.RawMessage, metadata map[string]any) error {
	return &ElicitationRequiredError{Message: message, Schema: slices.Clone(schema), Metadata: maps.Clone(metadata)}
}

func (e *ElicitationRequiredError) Error() string { return "input required: " + e.Message }

// Elicitation is a person's answer to an elicitation, given to the tool
// when its call is resumed: the action (ElicitAccept, ElicitDecline or
// ElicitCancel), the content of an accepted answer (it fits the requested
// schema: the runtime refuses an answer that does not), who answered, and
// the request it answers (its message, schema and metadata, as the tool
// gave them).
type Elicitation struct {
	Action     string          `json:"action"`
	Content    json.RawMessage `json:"content,omitempty"`
	AnsweredBy string          `json:"answered_by,omitempty"`
	Request    ElicitRequest   `json:"request"`
}

// ElicitRequest is the elicitation a call asked (see
// [ElicitationRequiredError]).
type ElicitRequest struct {
	Message  string          `json:"message"`
	Schema   json.RawMessage `json:"requested_schema,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// CheckElicitAnswer checks an answer to an elicitation that asked for
// schema: a known action, and for ElicitAccept content that fits the
// schema (an object when there is a schema). Declined and cancelled
// answers carry no content.
func CheckElicitAnswer(schema json.RawMessage, action string, content json.RawMessage) error {
	switch action {
	case ElicitDecline, ElicitCancel:
		if len(content) > 0 && string(content) != "null" {
			return fmt.Errorf("%w: a %s answer carries no content", ErrInvalidElicitAnswer, action)
		}
		return nil
	case ElicitAccept:
	default:
		return fmt.Errorf("%w: action %q is not accept, decline or cancel", ErrInvalidElicitAnswer, action)
	}
	if len(schema) == 0 {
		return nil
	}
	if len(content) == 0 {
		return fmt.Errorf("%w: an accepted answer needs content fitting the requested schema", ErrInvalidElicitAnswer)
	}
	v, err := newValidator(schema)
	if err != nil {
		return fmt.Errorf("%w: the requested schema: %v", ErrInvalidElicitAnswer, err)
	}
	var x any
	if err := json.Unmarshal(content, &x); err != nil {
		return fmt.Errorf("%w: the content is not JSON: %v", ErrInvalidElicitAnswer, err)
	}
	if ia := v.validate(x); ia != nil {
		return fmt.Errorf("%w: %s", ErrInvalidElicitAnswer, strings.Replace(ia.Message, "the arguments", "the content", 1))
	}
	return nil
}
