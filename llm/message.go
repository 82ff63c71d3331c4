package llm

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Role says who a Message is from. It is a closed set: RoleSystem,
// RoleUser and RoleAssistant.
type Role string

// The roles of a conversation.
const (
	// RoleSystem carries Instructions parts only.
	RoleSystem Role = "system"
	// RoleUser carries what the application sends the model: UserPrompt,
	// ToolReturn and RetryPrompt parts.
	RoleUser Role = "user"
	// RoleAssistant carries what the model produced: Text and ToolCall parts.
	RoleAssistant Role = "assistant"
)

// PartKind names a kind of message part; it is the "kind" field of a part's
// JSON form. It is a closed set, one constant per Part type.
type PartKind string

// The catalogue of part kinds.
const (
	KindInstructions PartKind = "instructions"
	KindUserPrompt   PartKind = "user_prompt"
	KindText         PartKind = "text"
	KindToolCall     PartKind = "tool_call"
	KindToolReturn   PartKind = "tool_return"
	KindRetryPrompt  PartKind = "retry_prompt"
)

// Part is one piece of a Message. The set is sealed: Instructions,
// UserPrompt, Text, ToolCall, ToolReturn and RetryPrompt are its only
// members. Switch on the concrete type, or on Kind.
type Part interface {
	// Kind returns the part's kind, the "kind" field of its JSON form.
	Kind() PartKind
	// validate reports a missing or malformed field.
	validate() error
	// clone returns a deep copy.
	clone() Part
	// size returns the payload bytes used to estimate tokens.
	size() int
}

// Instructions is system text recorded in a conversation (RoleSystem).
// The current instructions of a request travel in Request.Instructions.
type Instructions struct {
	Text string `json:"text"`
}

// UserPrompt is text written by the user (RoleUser).
type UserPrompt struct {
	Text string `json:"text"`
}

// Text is text produced by the model (RoleAssistant).
type Text struct {
	Text string `json:"text"`
}

// ToolCall is the model asking for a tool to be called (RoleAssistant).
// ID is the provider's call id: it pairs the call with its ToolReturn or
// RetryPrompt. Arguments is what the model produced, normally a JSON
// object; it is not validated against the tool's schema here, that is the
// runtime's job. A model may produce arguments that are not JSON at all:
// they are kept as they came (the message still validates, and its JSON
// form carries them as "raw_arguments"), and the runtime answers the call
// with an invalid_arguments return.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolReturn is the result of a tool call handed back to the model
// (RoleUser). Content is the model-facing content as JSON; a plain text
// return is a JSON string (see TextContent). IsError marks a failed call.
type ToolReturn struct {
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// RetryPrompt tells the model how to fix a tool call it made (invalid
// arguments, a tool asking for a retry, an unknown tool) (RoleUser).
// CallID and Name identify the call; both are empty when the retry is not
// about a tool call. Retries is how many retries of this tool the run has
// used, this one included; 0 when the runtime does not count them.
type RetryPrompt struct {
	CallID  string `json:"call_id,omitempty"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
	Retries int    `json:"retries,omitempty"`
}

// Kind returns KindInstructions.
func (Instructions) Kind() PartKind { return KindInstructions }

// Kind returns KindUserPrompt.
func (UserPrompt) Kind() PartKind { return KindUserPrompt }

// Kind returns KindText.
func (Text) Kind() PartKind { return KindText }

// Kind returns KindToolCall.
func (ToolCall) Kind() PartKind { return KindToolCall }

// Kind returns KindToolReturn.
func (ToolReturn) Kind() PartKind { return KindToolReturn }

// Kind returns KindRetryPrompt.
func (RetryPrompt) Kind() PartKind { return KindRetryPrompt }

func (p Instructions) clone() Part { return p }
func (p UserPrompt) clone() Part   { return p }
func (p Text) clone() Part         { return p }
func (p ToolCall) clone() Part     { return p.Clone() }
func (p RetryPrompt) clone() Part  { return p }
func (p ToolReturn) clone() Part {
	p.Content = slices.Clone(p.Content)
	return p
}

// Clone returns a copy of c that shares no memory with it.
func (c ToolCall) Clone() ToolCall {
	c.Arguments = slices.Clone(c.Arguments)
	return c
}

func (p Instructions) size() int { return len(p.Text) }
func (p UserPrompt) size() int   { return len(p.Text) }
func (p Text) size() int         { return len(p.Text) }
func (p ToolCall) size() int     { return len(p.Name) + len(p.Arguments) }
func (p ToolReturn) size() int   { return len(p.Name) + len(p.Content) }
func (p RetryPrompt) size() int  { return len(p.Name) + len(p.Message) }

func (Instructions) validate() error { return nil }
func (UserPrompt) validate() error   { return nil }
func (Text) validate() error         { return nil }

func (p ToolCall) validate() error {
	switch {
	case p.ID == "":
		return fmt.Errorf("tool call %q without an id", p.Name)
	case p.Name == "":
		return fmt.Errorf("tool call %q without a name", p.ID)
	}
	return nil
}

func (p ToolReturn) validate() error {
	switch {
	case p.CallID == "":
		return fmt.Errorf("tool return %q without a call id", p.Name)
	case p.Name == "":
		return fmt.Errorf("tool return %q without a tool name", p.CallID)
	case len(p.Content) > 0 && !json.Valid(p.Content):
		return fmt.Errorf("tool return %q (%s): content is not valid JSON", p.CallID, p.Name)
	}
	return nil
}

func (p RetryPrompt) validate() error {
	if p.Message == "" {
		return fmt.Errorf("retry prompt %q (%s) without a message", p.CallID, p.Name)
	}
	return nil
}

// TextContent encodes s as tool-return content: a JSON string.
func TextContent(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// ContentText returns the content as text for providers that take tool
// results as strings: the string itself when Content is a JSON string, the
// JSON otherwise, and "" when there is no content.
func (p ToolReturn) ContentText() string {
	var s string
	if err := json.Unmarshal(p.Content, &s); err == nil {
		return s
	}
	return string(p.Content)
}

// Message is one turn of a conversation: its role and its parts, in order.
// Messages are JSON-encodable (each part carries its kind); see
// Message.MarshalJSON.
type Message struct {
	Role  Role
	Parts []Part
}

// allowed lists the part kinds each role may carry.
var allowed = map[Role][]PartKind{
	RoleSystem:    {KindInstructions},
	RoleUser:      {KindUserPrompt, KindToolReturn, KindRetryPrompt},
	RoleAssistant: {KindText, KindToolCall},
}

// Validate reports whether m follows the message model: a known role, at
// least one part, parts allowed in that role, and each part's required
// fields present. The error matches ErrInvalidMessage.
func (m Message) Validate() error {
	kinds, ok := allowed[m.Role]
	if !ok {
		return fmt.Errorf("%w: unknown role %q", ErrInvalidMessage, m.Role)
	}
	if len(m.Parts) == 0 {
		return fmt.Errorf("%w: %s message without parts", ErrInvalidMessage, m.Role)
	}
	for i, p := range m.Parts {
		if p == nil {
			return fmt.Errorf("%w: %s message: part %d is nil", ErrInvalidMessage, m.Role, i)
		}
		if !slices.Contains(kinds, p.Kind()) {
			return fmt.Errorf("%w: %s message: part %d: a %s part is not allowed in this role", ErrInvalidMessage, m.Role, i, p.Kind())
		}
		if err := p.validate(); err != nil {
			return fmt.Errorf("%w: %s message: part %d: %v", ErrInvalidMessage, m.Role, i, err)
		}
	}
	return nil
}

// Clone returns a copy of m that shares no memory with it.
func (m Message) Clone() Message {
	out := Message{Role: m.Role}
	if m.Parts != nil {
		out.Parts = make([]Part, len(m.Parts))
		for i, p := range m.Parts {
			if p != nil {
				out.Parts[i] = p.clone()
			}
		}
	}
	return out
}

// ToolCalls returns the tool calls among m's parts, in order.
func (m Message) ToolCalls() []ToolCall { return partsOf[ToolCall](m) }

// ToolReturns returns the tool returns among m's parts, in order.
func (m Message) ToolReturns() []ToolReturn { return partsOf[ToolReturn](m) }

// RetryPrompts returns the retry prompts among m's parts, in order.
func (m Message) RetryPrompts() []RetryPrompt { return partsOf[RetryPrompt](m) }

func partsOf[T Part](m Message) []T {
	var out []T
	for _, p := range m.Parts {
		if t, ok := p.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// SystemMessage returns a RoleSystem message holding text as Instructions.
func SystemMessage(text string) Message {
	return Message{Role: RoleSystem, Parts: []Part{Instructions{Text: text}}}
}

// UserMessage returns a RoleUser message holding text as a UserPrompt.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{UserPrompt{Text: text}}}
}
