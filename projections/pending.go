package projections

import (
	"bytes"
	"encoding/json"
	"time"
)

// PendingKind says what a pending item waits for.
type PendingKind string

// The pending kinds.
const (
	PendingApproval    PendingKind = "approval"
	PendingDeferred    PendingKind = "deferred"
	PendingElicitation PendingKind = "elicitation"
)

// PendingItem is a tool call that waits for a human decision
// (approval.requested) or an outside result (deferred.requested).
type PendingItem struct {
	Kind       PendingKind     `json:"kind"`
	SessionID  string          `json:"session_id"`
	RunID      string          `json:"run_id"`
	ToolCallID string          `json:"tool_call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	// Reason is the approval's reason; for a deferred call, the reason
	// the tool gave when it deferred (the suspending tool.returned's
	// control reason), since deferred.requested carries none.
	Reason   string          `json:"reason,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Message and Schema are an elicitation's (elicitation.requested):
	// what the person is asked and the JSON Schema the answer must fit.
	Message string          `json:"message,omitempty"`
	Schema  json.RawMessage `json:"requested_schema,omitempty"`
	// RequestedAt is the time of the *.requested event; Position its
	// position in the log.
	RequestedAt time.Time `json:"requested_at"`
	Position    uint64    `json:"position"`
}

// returnInfo is the part of a canonical tool return (toolsets.Return, as
// recorded in tool.returned and deferred.resolved) the views read.
type returnInfo struct {
	Kind    string `json:"kind"`
	IsError bool   `json:"is_error"`
	Control *struct {
		Reason string `json:"reason"`
	} `json:"control"`
}

// parseReturn reads the kind, error flag and control reason of a
// canonical return; a return it cannot read gives the zero info.
func parseReturn(raw json.RawMessage) returnInfo {
	if ri, ok := fastReturn(raw); ok {
		return ri
	}
	var ri returnInfo
	_ = json.Unmarshal(raw, &ri)
	return ri
}

// suspendReason is the control reason of a suspending return, "" if none.
func (ri returnInfo) suspendReason() string {
	if ri.Control == nil {
		return ""
	}
	return ri.Control.Reason
}

// mentionsControl reports whether a return may suspend.
func mentionsControl(raw json.RawMessage) bool { return bytes.Contains(raw, []byte(`"control"`)) }
