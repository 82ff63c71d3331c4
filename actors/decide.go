package actors

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// decide checks resume b against run r (nil: the session has no such run)
// and returns the events that record its decisions (decisionEvents), or a
// *CommandError refusing it. check validates reviewed arguments against
// the tools' schemas (nil: they cannot be checked, and are refused).
func decide(session string, r *RunState, b ResumeCommand, check func(tool string, args json.RawMessage) error) ([]record, error) {
	if r == nil {
		return nil, commandError(VerbResume, session, ErrUnknownRun, "no run %q", b.RunID)
	}
	if r.Status != StatusWaiting {
		for _, d := range b.Decisions {
			if prev := r.Decided[d.ID]; prev != nil {
				return nil, alreadyDecided(session, r, prev)
			}
		}
		return nil, commandError(VerbResume, session, ErrNotWaiting, "run %q is %s", r.ID, r.Status)
	}
	return decisionEvents(session, r, b.Decisions, check)
}

// alreadyDecided refuses a decision on an item of run r that prev decided.
func alreadyDecided(session string, r *RunState, prev *Decision) *CommandError {
	by := ""
	if prev.By != "" {
		by = " by " + prev.By
	}
	return commandError(VerbResume, session, ErrAlreadyDecided, "%q of run %q was already decided (%s%s)", prev.ID, r.ID, prev.Action, by)
}

// refusalRecord is the decision.refused event of resume b, refused with
// ce: the decisions as sent, under run r (or, when the session has no
// such run, naming the run in the data), and under the decision's call id
// when there is one decision.
func refusalRecord(session string, r *RunState, b ResumeCommand, ce *CommandError) record {
	d := events.DecisionRefused{Code: ce.Code, Message: ce.Message}
	var run, call string
	if r != nil {
		run = r.ID
	} else {
		d.Run = b.RunID
	}
	for _, x := range b.Decisions {
		rd := events.RefusedDecision{ID: x.ID, Action: x.Action, By: x.By, Authenticated: x.Authenticated, Reason: x.Reason}
		if json.Valid(x.Arguments) {
			rd.Arguments = x.Arguments
		}
		if json.Valid(x.Result) {
			rd.Result = x.Result
		}
		d.Decisions = append(d.Decisions, rd)
	}
	if len(b.Decisions) == 1 {
		call = b.Decisions[0].ID
	}
	return newRecord(events.TypeDecisionRefused, session, run, call, d)
}

// decisionEvents checks decisions against the pending items of r (one
// decision for each, fitting its kind; reviewed arguments that fit the
// tool's schema, by check) and returns the events that record them and
// resume the run: approval.decided / deferred.resolved, run.resumed, then
// tool.returned for denied and resolved calls. Nothing is returned on
// error.
func decisionEvents(session string, r *RunState, ds []Decision, check func(tool string, args json.RawMessage) error) ([]record, error) {
	pending := r.Pending()
	items := make(map[string]PendingItem, len(pending))
	for _, p := range pending {
		items[p.ID] = p
	}
	byID := make(map[string]Decision, len(ds))
	for _, d := range ds {
		it, ok := items[d.ID]
		k := it.Kind
		switch {
		case !ok && r.Decided[d.ID] != nil:
			return nil, alreadyDecided(session, r, r.Decided[d.ID])
		case !ok:
			return nil, commandError(VerbResume, session, ErrUnknownDecision, "no pending item %q in this session's run %q", d.ID, r.ID)
		case byID[d.ID].ID != "":
			return nil, commandError(VerbResume, session, ErrDuplicateDecision, "two decisions for %q", d.ID)
		}
		switch {
		case k == PendingApproval && d.Action != ActionApprove && d.Action != ActionDeny,
			k == PendingDeferred && d.Action != ActionComplete && d.Action != ActionFail,
			k == PendingElicitation && d.Action != ActionAnswer:
			return nil, commandError(VerbResume, session, ErrWrongDecision, "%q is a pending %s; %q does not apply", d.ID, k, d.Action)
		case len(d.Arguments) > 0 && (!json.Valid(d.Arguments) || firstByte(d.Arguments) != '{'):
			return nil, commandError(VerbResume, session, ErrWrongDecision, "reviewed arguments of %q are not a JSON object", d.ID)
		case d.Usage != nil && (k != PendingDeferred || negativeUsage(*d.Usage)):
			return nil, commandError(VerbResume, session, ErrWrongDecision, "usage of %q: only a deferred call's result carries usage, and none of it negative", d.ID)
		case len(d.Result) > 0 && !json.Valid(d.Result):
			return nil, commandError(VerbResume, session, ErrWrongDecision, "result of %q is not JSON", d.ID)
		case d.Action == ActionApprove && len(d.Arguments) > 0 && check == nil:
			return nil, commandError(VerbResume, session, ErrWrongDecision, "reviewed arguments of %q cannot be checked: the tools of run %q are not prepared", d.ID, r.ID)
		case d.Action == ActionApprove && len(d.Arguments) > 0:
			if err := check(it.Tool, d.Arguments); err != nil {
				return nil, commandError(VerbResume, session, ErrWrongDecision, "reviewed arguments of %q do not fit tool %q: %v", d.ID, it.Tool, err)
			}
		case d.Action == ActionAnswer:
			if _, err := answerOf(it, d); err != nil {
				return nil, commandError(VerbResume, session, ErrWrongDecision, "the answer to %q: %v", d.ID, err)
			}
		}
		byID[d.ID] = d
	}
	var missing []string
	for _, p := range pending {
		if _, ok := byID[p.ID]; !ok {
			missing = append(missing, p.ID)
		}
	}
	if len(missing) > 0 {
		return nil, commandError(VerbResume, session, ErrMissingDecisions, "no decision for %v", missing)
	}
	var evs, returns []record
	ids := make([]string, 0, len(pending))
	for _, p := range pending {
		d := byID[p.ID]
		cs := r.call(p.ID)
		ids = append(ids, p.ID)
		switch d.Action {
		case ActionApprove, ActionDeny:
			evs = append(evs, newRecord(events.TypeApprovalDecided, session, r.ID, p.ID, events.ApprovalDecided{Approved: d.Action == ActionApprove, By: d.By, Authenticated: d.Authenticated, Reason: d.Reason, Arguments: d.Arguments}))
			if d.Action == ActionDeny {
				msg := "The call was denied"
				if d.By != "" {
					msg += " by " + d.By
				}
				if d.Reason != "" {
					msg += ": " + d.Reason
				}
				returns = append(returns, returnedEvent(session, r.ID, controlReturn(cs, toolsets.KindFeedback, &toolsets.Control{Message: msg + ".", Reason: d.Reason})))
			}
		case ActionComplete:
			ret := toolsets.Return{CallID: cs.ID, ToolName: cs.Tool, Kind: toolsets.KindSuccess, Success: true, Content: slices.Clone(d.Result), Attempts: 1, MaxAttempts: 1}
			if len(ret.Content) == 0 {
				ret.Content = json.RawMessage("null")
			}
			b, _ := json.Marshal(&ret)
			evs = append(evs, newRecord(events.TypeDeferredResolved, session, r.ID, p.ID, events.DeferredResolved{Return: b, By: d.By, Authenticated: d.Authenticated, Usage: d.Usage}))
			returns = append(returns, returnedEvent(session, r.ID, ret))
		case ActionAnswer:
			a, _ := answerOf(p, d)
			evs = append(evs, newRecord(events.TypeElicitationAnswered, session, r.ID, p.ID, events.ElicitationAnswered{Action: a.Action, Content: a.Content, By: d.By, Authenticated: d.Authenticated}))
		case ActionFail:
			ret := controlReturn(cs, toolsets.KindExecution, &toolsets.Control{Message: "the deferred call failed: " + d.Reason, Reason: d.Reason})
			if len(d.Result) > 0 {
				// A failure with details: the model sees both.
				ret.Content, _ = json.Marshal(failedDeferred{Error: ret.Control.Message, Details: slices.Clone(d.Result)})
			}
			b, _ := json.Marshal(&ret)
			evs = append(evs, newRecord(events.TypeDeferredResolved, session, r.ID, p.ID, events.DeferredResolved{Return: b, IsError: true, By: d.By, Authenticated: d.Authenticated, Usage: d.Usage}))
			returns = append(returns, returnedEvent(session, r.ID, ret))
		}
	}
	evs = append(evs, newRecord(events.TypeRunResumed, session, r.ID, "", events.RunResumed{ToolCallIDs: ids}))
	return append(evs, returns...), nil
}

// answerOf reads answer decision d to elicitation it and checks it
// against the schema it asked for (toolsets.CheckElicitAnswer).
func answerOf(it PendingItem, d Decision) (elicitAnswer, error) {
	var a elicitAnswer
	if len(d.Result) == 0 || firstByte(d.Result) != '{' {
		return a, fmt.Errorf(`it is not an object {"action", "content"}`)
	}
	if err := json.Unmarshal(d.Result, &a); err != nil {
		return a, fmt.Errorf(`it is not an object {"action", "content"}: %v`, err)
	}
	var schema json.RawMessage
	if s, ok := it.Metadata[toolsets.MetaElicitationSchema]; ok {
		b, err := json.Marshal(s)
		if err != nil {
			return a, fmt.Errorf("the requested schema: %v", err)
		}
		schema = b
	}
	return a, toolsets.CheckElicitAnswer(schema, a.Action, a.Content)
}

// failedDeferred is the content of a deferred call failed with details
// (a fail decision with a Result).
type failedDeferred struct {
	Error   string          `json:"error"`
	Details json.RawMessage `json:"details"`
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}
