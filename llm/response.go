package llm

import (
	"fmt"
)

// FinishReason says why the model stopped. Adapters map their provider's
// reasons onto these constants and keep unknown ones as they are.
type FinishReason string

// The finish reasons the runtime understands.
const (
	FinishStop          FinishReason = "stop"           // the model finished its answer
	FinishToolCalls     FinishReason = "tool_calls"     // the model asked for tool calls
	FinishLength        FinishReason = "length"         // a token limit cut the answer
	FinishContentFilter FinishReason = "content_filter" // the provider withheld content
)

// Response is a model's complete answer to one Request. It is
// JSON-encodable so that it can be recorded in the event log.
type Response struct {
	// Text is the model's text; empty when it only called tools.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls the model asked for, in the model's order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage is what this one request cost.
	Usage Usage `json:"usage,omitzero"`
	// Model is the name of the model that answered.
	Model string `json:"model,omitempty"`
	// FinishReason says why the model stopped.
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	// Attempts is how many times the request was sent to get this answer,
	// set by a retrying wrapper; 0 means the model did not count (one
	// attempt).
	Attempts int `json:"attempts,omitempty"`
}

// Clone returns a copy of r that shares no memory with it. A nil r gives nil.
func (r *Response) Clone() *Response {
	if r == nil {
		return nil
	}
	out := *r
	if r.ToolCalls != nil {
		out.ToolCalls = make([]ToolCall, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			out.ToolCalls[i] = c.Clone()
		}
	}
	return &out
}

// Validate reports whether every tool call has an id and a name and ids
// are unique within the response. The error matches ErrInvalidResponse.
// The runtime calls it before scheduling any call, and fails the run on
// an invalid response. Arguments that are not valid JSON do not make a
// response invalid: the model can correct them, so the runtime answers
// that call with an invalid_arguments return and asks the model again.
func (r *Response) Validate() error {
	seen := make(map[string]bool, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		if err := c.validate(); err != nil {
			return fmt.Errorf("%w: tool call %d: %v", ErrInvalidResponse, i, err)
		}
		if seen[c.ID] {
			return fmt.Errorf("%w: tool call %d: duplicate call id %q", ErrInvalidResponse, i, c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// Message returns the response as a RoleAssistant message for the
// conversation history: a Text part when Text is not empty, then one
// ToolCall part per call, in order. The parts share no memory with r.
func (r *Response) Message() Message {
	m := Message{Role: RoleAssistant, Parts: make([]Part, 0, len(r.ToolCalls)+1)}
	if r.Text != "" {
		m.Parts = append(m.Parts, Text{Text: r.Text})
	}
	for _, c := range r.ToolCalls {
		m.Parts = append(m.Parts, c.Clone())
	}
	return m
}
