package actors

import (
	"slices"

	"github.com/weft-run/weft/events"
)

// toolReport decides on a report of a call of run runID's batch: the
// event that records it (tool.started, tool.retried, tool.progress or a
// tool_search.* outcome, tool.returned), which the shell queues. A report
// of another run, of a call not in flight (a late report of a closed
// call), or of an unknown type is dropped. A returned call is no longer in
// flight; its return is recorded as TooLargeReturn when it exceeds the
// payload limit.
func (k core) toolReport(runID string, rep ToolReport) decision {
	r := k.st.ActiveRun()
	if k.f.run == "" || r == nil || k.f.run != runID || r.ID != runID {
		return decision{}
	}
	cs := r.call(rep.CallID)
	if cs == nil || !k.f.inFlight[rep.CallID] {
		return decision{}
	}
	var ev record
	switch rep.Type {
	case ReportStarted:
		ev = newRecord(events.TypeToolStarted, k.session, r.ID, cs.ID, events.ToolStarted{Tool: cs.Tool, Attempt: rep.Attempt})
	case ReportRetried:
		info := events.ErrorInfo{Message: "attempt failed"}
		if rep.Error != nil {
			info = *rep.Error
		}
		ev = newRecord(events.TypeToolRetried, k.session, r.ID, cs.ID, events.ToolRetried{Tool: cs.Tool, Attempt: rep.Attempt, Error: info})
	case ReportProgress:
		if rec, ok := searchRecord(k.session, r.ID, cs.ID, rep.Progress); ok {
			ev = rec
			break
		}
		p := events.ToolProgress{Tool: cs.Tool, Attempt: rep.Attempt}
		if rep.Progress != nil {
			p.Name, p.Data = rep.Progress.Name, rep.Progress.Data
		}
		ev = newRecord(events.TypeToolProgress, k.session, r.ID, cs.ID, p)
	case ReportReturned:
		if rep.Return == nil {
			return decision{}
		}
		ret := *rep.Return
		ret.CallID, ret.ToolName = cs.ID, cs.Tool
		if d, ok := k.codeCall(r, cs, &ret); ok {
			return d
		}
		return decision{recs: []record{limitedReturnedEvent(k.session, r.ID, ret, k.maxMsg)}, queue: true, returned: cs.ID}
	default:
		return decision{}
	}
	return decision{recs: []record{ev}, queue: true}
}

// flushed decides on the tool events the shell queued: appended (each is
// a step of its own, so they may be split), and the run carries on when a
// call returned.
func flushed(recs []record) decision {
	returned := slices.ContainsFunc(recs, func(r record) bool {
		return r.Type == events.TypeToolReturned || r.Type == events.TypeToolRequested // a program's next call
	})
	return decision{recs: recs, split: true, carryOn: returned}
}

// batchFinished decides on the end of run runID's batch (every call
// returned): the run carries on.
func (k core) batchFinished(runID string) decision {
	if k.f.run == "" || k.f.run != runID {
		return decision{}
	}
	f := k.f
	f.batching = false
	return decision{carryOn: true}.with(f)
}
