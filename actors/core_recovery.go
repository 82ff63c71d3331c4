package actors

import (
	"encoding/json"

	"github.com/weft-run/weft/events"
)

// advance decides the active run's next action from the state and the
// facts: it is asked after every change and on recovery, so a rebuilt
// actor carries on from wherever its log stopped. It decides nothing for a
// run that is not running, and nothing that is already under way.
func (k core) advance() decision {
	r := k.st.ActiveRun()
	if r == nil || r.Status != StatusRunning {
		return k.dueHandlers()
	}
	spec, ok := k.look.AgentVersion(r.Agent, runVersion(r))
	if !ok {
		return k.fail(r, FailInternal, unknownAgent(r.Agent))
	}
	if recs := completion(k.session, r, k.f.prep); len(recs) > 0 {
		if k.f.prep == nil && len(r.Batch) < len(r.Calls) {
			// tool.requested names the call's toolset: prepare first.
			return k.prepare(r, r.Step, true)
		}
		return decision{recs: recs, split: true, carryOn: true}
	}
	switch {
	case r.RetryExceeded != "":
		return k.retryExceeded(r)
	case r.Final:
		out, _ := json.Marshal(r.Output)
		u := r.Usage
		done := newRecord(events.TypeRunCompleted, k.session, r.ID, "", events.RunCompleted{Output: out, Usage: &u})
		done.extra = r.Output
		return decision{recs: []record{done}}
	case r.AwaitingModel:
		// A model.request without its response (a restart): ask again.
		if k.f.prep == nil {
			return k.prepare(r, r.Step-1, false)
		}
		if !k.f.modelBusy {
			return decision{effects: one(effCallModel{req: k.modelRequest(r, spec, r.Step)})}
		}
		return decision{}
	case r.OutputRejections > outputBudget(spec):
		return k.outputExceeded(r, spec)
	case r.NeedModel && handoffTo(r) != "":
		return k.handoff(r)
	case r.NeedModel:
		return k.nextStep(r, spec)
	case len(r.Batch) > 0:
		return k.runBatch(r)
	}
	return decision{}
}

// nextStep decides the run's next model request: within the request
// limit, with the step's tools prepared.
func (k core) nextStep(r *RunState, spec *AgentSpec) decision {
	if d, over := k.requestLimit(r, spec); over {
		return d
	}
	f, changed := k.f, false
	if f.prep != nil && f.prepStep != r.Step && !f.toolsets {
		// Loose tools only: every preparation gives the same inventory,
		// and no toolset has anything to report.
		f.prepStep, changed = r.Step, true
	}
	var d decision
	switch {
	case f.prep == nil || f.prepStep != r.Step || (f.forBatch && !f.preparing):
		k.f = f
		d = k.prepare(r, r.Step, false)
	case f.preparing:
		// The step's preparation is under way; its reply requests.
	default:
		k.f = f
		d = k.requestModel(r, spec, nil)
	}
	if changed && !d.newFacts {
		d = d.with(f)
	}
	return d
}

// completion returns the events a split append (appendSteps) left out of
// the stream before the process stopped: the tool.requested of the last
// response's calls that have none, then its usage.snapshot. It returns nil
// when nothing is missing.
func completion(session string, r *RunState, prep *Prepared) []record {
	if r.UsageDue == nil && len(r.Batch) == len(r.Calls) {
		return nil
	}
	var recs []record
	for _, tc := range r.Calls {
		if r.call(tc.ID) != nil {
			continue
		}
		var toolset string
		if prep != nil {
			toolset = prep.ToolsetOf[tc.Name].Name
		}
		recs = append(recs, newRecord(events.TypeToolRequested, session, r.ID, tc.ID, events.NewToolRequested(tc.Name, toolset, tc.Arguments)))
	}
	if r.UsageDue != nil {
		recs = append(recs, newRecord(events.TypeUsageSnapshot, session, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: *r.UsageDue}))
	}
	return recs
}
