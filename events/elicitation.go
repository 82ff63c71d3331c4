package events

import "encoding/json"

// ElicitationRequested (elicitation.requested) records a tool call that
// asks a person for input (an MCP server's elicitation, say): the message
// and the JSON Schema the answer must fit; the call waits in the HITL
// queue and runs again once answered (elicitation.answered).
type ElicitationRequested struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Message   string          `json:"message"`
	Schema    json.RawMessage `json:"requested_schema,omitempty"`
	// Metadata is what the tool keeps with its request and gets back with
	// the answer (a server's request state, say).
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ElicitationAnswered (elicitation.answered) records a person's answer to
// an elicitation: accept (with content that fits the requested schema),
// decline or cancel.
type ElicitationAnswered struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	// By says who answered (optional).
	By string `json:"by,omitempty"`
	// Authenticated is ApprovalDecided's: By is an authenticated principal.
	Authenticated bool `json:"authenticated,omitempty"`
}
