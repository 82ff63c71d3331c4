package weft

import (
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/actors"
)

// Action is what a Decision does with its pending item. The set is closed.
type Action string

// The decision actions: Approve and Deny decide a PendingApproval item,
// Complete and Fail (or FailWith) a PendingDeferred one, Answer a
// PendingElicitation one.
const (
	ActionApprove  Action = "approve"
	ActionDeny     Action = "deny"
	ActionComplete Action = "complete"
	ActionFail     Action = "fail"
	ActionAnswer   Action = "answer"
)

// Decision is a decision on a pending item, passed to Session.Resume;
// build it with Approve, Deny, Complete, Fail or FailWith. It encodes as
// the JSON of a resume command's decision.
type Decision struct {
	// ID is the pending item's id: the tool call id.
	ID     string `json:"id"`
	Action Action `json:"action"`
	// By says who decided.
	By string `json:"by,omitempty"`
	// Authenticated says that By is a principal the caller authenticated
	// (the HTTP API sets it for a bearer token's principal); recorded in
	// approval.decided and deferred.resolved. Without it By is free text.
	Authenticated bool `json:"authenticated,omitempty"`
	// Reason explains a denial or a failure.
	Reason string `json:"reason,omitempty"`
	// Arguments are the reviewed arguments of an approval (optional, a
	// JSON object validated like the model's).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is a completed deferred call's value, or a failed one's
	// details (JSON).
	Result json.RawMessage `json:"result,omitempty"`
}

// check refuses a decision whose JSON values are not JSON (a value
// Complete or FailWith could not encode): such a decision cannot be sent.
func (d Decision) check() error {
	switch {
	case len(d.Result) > 0 && !json.Valid(d.Result):
		return fmt.Errorf("%w: the result or details of %q did not encode as JSON", ErrWrongDecision, d.ID)
	case len(d.Arguments) > 0 && !json.Valid(d.Arguments):
		return fmt.Errorf("%w: the reviewed arguments of %q are not JSON", ErrWrongDecision, d.ID)
	}
	return nil
}

// command is the decision as a resume command carries it.
func (d Decision) command() actors.Decision {
	return actors.Decision{ID: d.ID, Action: string(d.Action), By: d.By, Authenticated: d.Authenticated, Reason: d.Reason, Arguments: d.Arguments, Result: d.Result}
}

// Approve approves pending call id, decided by by. reviewedArgs, when not
// nil, replaces the call's arguments (a JSON object, validated like the
// model's).
func Approve(id, by string, reviewedArgs json.RawMessage) Decision {
	return Decision{ID: id, Action: ActionApprove, By: by, Arguments: reviewedArgs}
}

// Deny denies pending call id; the model gets a denial return with reason.
func Deny(id, by, reason string) Decision {
	return Decision{ID: id, Action: ActionDeny, By: by, Reason: reason}
}

// Complete supplies the result of deferred call id: result is encoded as
// JSON and becomes the call's return content. A result that cannot be
// encoded gives a decision the resume refuses (ErrWrongDecision).
func Complete(id, by string, result any) Decision {
	return Decision{ID: id, Action: ActionComplete, By: by, Result: encodeDecided(result)}
}

// Answer answers elicitation id for by: action is toolsets.ElicitAccept
// with content (encoded as JSON; it must fit the requested schema, or the
// resume is refused with ErrWrongDecision), or toolsets.ElicitDecline or
// toolsets.ElicitCancel with nil content. The call runs again with the
// answer (toolsets.ToolContext.Elicitation).
func Answer(id, by, action string, content any) Decision {
	answer := struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content,omitempty"`
	}{Action: action}
	if content != nil {
		answer.Content = encodeDecided(content)
	}
	return Decision{ID: id, Action: ActionAnswer, By: by, Result: encodeDecided(answer)}
}

// Fail fails deferred call id with reason; the model gets an error return
// (kind execution) whose content is the text "the deferred call failed:
// {reason}".
func Fail(id, by, reason string) Decision {
	return Decision{ID: id, Action: ActionFail, By: by, Reason: reason}
}

// FailWith fails deferred call id with reason and structured details (an
// exit code, the lines of a log, a partial result…). The model gets an
// error return whose content is the JSON object
// {"error": "the deferred call failed: {reason}", "details": details};
// Returns reads it back. Details that cannot be encoded give a decision
// the resume refuses (ErrWrongDecision); nil details are Fail's.
func FailWith(id, by, reason string, details any) Decision {
	d := Fail(id, by, reason)
	if details != nil {
		d.Result = encodeDecided(details)
	}
	return d
}

// encodeDecided encodes a decision's value; a value that does not encode
// gives invalid JSON, which the resume refuses.
func encodeDecided(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{")
	}
	return b
}
