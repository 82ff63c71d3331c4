package actors

import (
	"encoding/json"
	"strings"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// runBatch carries the current batch of run r on: calls that need to run
// (not returned, or approved) are checked — malformed arguments, the
// approval policy, the arguments of remote tools — and the rest are
// dispatched as one batch; once nothing runs and calls wait for decisions,
// the run waits.
func (k core) runBatch(r *RunState) decision {
	var toRun []*CallState
	for _, cs := range r.Batch {
		if (cs.Return == nil || runsAgain(cs)) && !k.f.inFlight[cs.ID] && !r.waitsForChild(cs) {
			toRun = append(toRun, cs)
		}
	}
	if len(toRun) == 0 {
		return k.wait(r)
	}
	if k.f.prep == nil {
		return k.prepare(r, r.Step, true)
	}
	if k.f.batching {
		return decision{} // the running batch finishes first
	}
	// The approval policy is checked before any call runs.
	var policy []record
	var reqs []ToolRequest
	for _, cs := range toRun {
		if ret, stopped := k.check(cs); stopped {
			policy = append(policy, returnedEvent(k.session, r.ID, ret))
			continue
		}
		var approval *toolsets.Approval
		if cs.Decision != nil && cs.Decision.Action == ActionApprove {
			approval = &toolsets.Approval{DecidedBy: cs.Decision.By, Note: cs.Decision.Reason, Arguments: cs.Decision.Arguments}
		}
		reqs = append(reqs, ToolRequest{SessionID: k.session, RunID: r.ID, CallID: cs.ID, Name: cs.Tool, Arguments: cs.Arguments, Approval: approval,
			Elicitation: elicitationOf(cs), ModelRetries: r.Retries[cs.Tool], Code: k.codeInput(r, cs)})
	}
	if len(reqs) == 0 {
		// Every call was stopped: once their returns are recorded the
		// batch is done, or waits.
		return decision{recs: policy, split: true, carryOn: true}
	}
	batch := batchCalls(r.Batch)
	d := effDispatch{run: r.ID, calls: reqs, batch: batch, sequential: sequentialBatch(batch, k.f.prep.Registry.Lookup)}
	return decision{recs: policy, split: true, effects: one(d)}
}

// check returns the return that stops call cs before it runs, if any: an
// approved call runs; arguments that are not JSON go back to the model;
// a call the approval policy gates, or one of a remote tool, is first
// checked against the tool's schema (the model corrects the arguments
// before anyone is asked or they leave the node), and a gated one then
// waits for approval.
func (k core) check(cs *CallState) (toolsets.Return, bool) {
	if runsAgain(cs) {
		// Approved, or answered: it was checked before it first ran.
		return toolsets.Return{}, false
	}
	if ret, refused := k.unselected(cs); refused {
		return ret, true
	}
	if ret, refused := refuseMalformed(k.f.prep, cs); refused {
		return ret, true
	}
	gated := needsApproval(k.f.prep, cs.Tool)
	if !gated && !k.look.IsRemoteTool(cs.Tool) {
		return toolsets.Return{}, false
	}
	if ret, refused := k.refuseInvalid(cs); refused {
		return ret, true
	}
	if gated {
		return policyReturn(cs), true
	}
	return toolsets.Return{}, false
}

// wait decides what run r does when no call of its batch needs to run:
// nothing while calls are in flight or once the batch is done; otherwise
// it records the approval.requested / deferred.requested of the pending
// calls not requested yet, and run.waiting.
func (k core) wait(r *RunState) decision {
	if len(k.f.inFlight) > 0 || k.f.batching || r.batchDone() {
		return decision{}
	}
	var recs []record
	var ids []string
	reasons := map[PendingKind]bool{}
	for _, cs := range r.Batch {
		if cs.Pending == "" || cs.Decision != nil {
			continue
		}
		ids = append(ids, cs.ID)
		reasons[cs.Pending] = true
		if cs.Requested {
			continue
		}
		var reason string
		var meta json.RawMessage
		if ctl := cs.Return.Control; ctl != nil {
			reason = ctl.Reason
			if len(ctl.Metadata) > 0 {
				meta, _ = json.Marshal(ctl.Metadata)
			}
		}
		switch cs.Pending {
		case PendingApproval:
			recs = append(recs, newRecord(events.TypeApprovalRequested, k.session, r.ID, cs.ID, events.ApprovalRequested{Tool: cs.Tool, Arguments: reviewedArguments(cs.Arguments), Reason: reason, Metadata: meta}))
		case PendingElicitation:
			req := elicitRequestOf(cs)
			var rmeta json.RawMessage
			if len(req.Metadata) > 0 {
				rmeta, _ = json.Marshal(req.Metadata)
			}
			recs = append(recs, newRecord(events.TypeElicitationRequested, k.session, r.ID, cs.ID, events.ElicitationRequested{Tool: cs.Tool, Arguments: reviewedArguments(cs.Arguments),
				Message: req.Message, Schema: req.Schema, Metadata: rmeta}))
		default:
			recs = append(recs, newRecord(events.TypeDeferredRequested, k.session, r.ID, cs.ID, events.DeferredRequested{Tool: cs.Tool, Arguments: reviewedArguments(cs.Arguments), Metadata: meta}))
		}
	}
	if len(ids) == 0 {
		return decision{}
	}
	var rs []string
	for _, kind := range pendingKinds {
		if reasons[kind] {
			rs = append(rs, string(kind))
		}
	}
	reason := strings.Join(rs, ",")
	recs = append(recs, newRecord(events.TypeRunWaiting, k.session, r.ID, "", events.RunWaiting{Reason: reason, ToolCallIDs: ids}))
	return decision{recs: recs, split: true}
}

// runsAgain reports whether pending call cs was decided so that it runs
// again: approved, or its elicitation answered.
func runsAgain(cs *CallState) bool {
	if cs.Decision == nil {
		return false
	}
	return cs.Pending == PendingApproval && cs.Decision.Action == ActionApprove ||
		cs.Pending == PendingElicitation && cs.Decision.Action == ActionAnswer
}

// elicitRequestOf is the elicitation call cs asked: its message, and its
// return's metadata without the requested schema, which is its own field.
func elicitRequestOf(cs *CallState) toolsets.ElicitRequest {
	var req toolsets.ElicitRequest
	ctl := cs.Return.Control
	if ctl == nil {
		return req
	}
	req.Message = ctl.Reason
	for k, v := range ctl.Metadata {
		if k == toolsets.MetaElicitationSchema {
			req.Schema, _ = json.Marshal(v)
			continue
		}
		if req.Metadata == nil {
			req.Metadata = map[string]any{}
		}
		req.Metadata[k] = v
	}
	return req
}

// elicitationOf is the answer an answered call runs again with (nil for
// any other call).
func elicitationOf(cs *CallState) *toolsets.Elicitation {
	if cs.Pending != PendingElicitation || cs.Decision == nil || cs.Decision.Action != ActionAnswer || cs.Return == nil {
		return nil
	}
	var a elicitAnswer
	_ = json.Unmarshal(cs.Decision.Result, &a) // checked when decided
	return &toolsets.Elicitation{Action: a.Action, Content: a.Content, AnsweredBy: cs.Decision.By, Request: elicitRequestOf(cs)}
}

// policyReturn is the return of a call the agent's approval policy stops
// before it runs.
func policyReturn(cs *CallState) toolsets.Return {
	const why = "the agent's approval policy requires approval for this tool"
	return controlReturn(cs, toolsets.KindApprovalRequired, &toolsets.Control{Message: "approval required: " + why, Reason: why})
}

func controlReturn(cs *CallState, kind toolsets.Kind, ctl *toolsets.Control) toolsets.Return {
	f := kind.Flags()
	content, _ := json.Marshal(ctl.Message)
	return toolsets.Return{CallID: cs.ID, ToolName: cs.Tool, Kind: kind, Success: f.Success, IsError: f.IsError, Content: content, Control: ctl}
}

func returnedEvent(session, run string, ret toolsets.Return) record {
	return limitedReturnedEvent(session, run, ret, 0)
}

// limitedReturnedEvent is returnedEvent for a return of a tool: one whose
// encoding is longer than limit bytes (limit > 0) is recorded as the
// execution error TooLargeReturn.
func limitedReturnedEvent(session, run string, ret toolsets.Return, limit int) record {
	b, err := json.Marshal(&ret)
	if err != nil {
		content, _ := json.Marshal("the tool's return could not be encoded: " + err.Error())
		ret = toolsets.Return{CallID: ret.CallID, ToolName: ret.ToolName, Kind: toolsets.KindUserError, IsError: true, Content: content}
		b, _ = json.Marshal(&ret)
	}
	if limit > 0 && len(b) > limit {
		ret = TooLargeReturn(ret.CallID, ret.ToolName, ret.Attempts, len(b), limit, "")
		b, _ = json.Marshal(&ret)
	}
	d := events.ToolReturned{Tool: ret.ToolName, Return: b, IsError: ret.IsError, Attempt: ret.Attempts}
	if typ, msg, ok := ret.CapturedError(); ok {
		d.Error = &events.ErrorInfo{Kind: string(ret.Kind), Message: msg, Type: typ}
	}
	rec := newRecord(events.TypeToolReturned, session, run, ret.CallID, d)
	rec.extra = ret
	return rec
}
