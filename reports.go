package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// lifecycleData is the part every toolset.* event's data shares.
type lifecycleData struct {
	Toolset          string `json:"toolset"`
	ID               string `json:"id"`
	State            string `json:"state"`
	ToolCount        int    `json:"tool_count"`
	InstructionCount int    `json:"instruction_count"`
	Message          string `json:"message"`
}

// LifecycleReports returns the toolset lifecycle reports recorded in evs
// (toolset.initialized, refreshed, unavailable, failed and closed events),
// in order; other events are skipped. Use it on the events of
// Session.RunStream or Session.Events.
func LifecycleReports(evs []events.Event) ([]toolsets.LifecycleReport, error) {
	var out []toolsets.LifecycleReport
	for _, ev := range evs {
		var state toolsets.LifecycleState
		switch ev.Type {
		case events.TypeToolsetInitialized:
			state = toolsets.StateInitialized
		case events.TypeToolsetRefreshed:
			state = toolsets.StateRefreshed
		case events.TypeToolsetUnavailable:
			state = toolsets.StateUnavailable
		case events.TypeToolsetFailed:
			state = toolsets.StateFailed
		case events.TypeToolsetClosed:
			state = toolsets.StateClosed
		default:
			continue
		}
		var d lifecycleData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return out, fmt.Errorf("weft: %s v%d: %w: %v", ev.Type, ev.Version, events.ErrMalformed, err)
		}
		out = append(out, toolsets.LifecycleReport{Name: d.Toolset, ID: d.ID, State: state, ToolCount: d.ToolCount,
			InstructionCount: d.InstructionCount, Message: d.Message})
	}
	return out, nil
}

// ToolReturn is a tool return read back from the log: the canonical
// [toolsets.Return] of a tool.returned event (call id, tool name, kind,
// flags, content, metadata, attempts, control payload…), with the run and
// the version of the event that recorded it. Its Value, the live Go value,
// is not recorded and is nil.
type ToolReturn struct {
	RunID   string
	Version uint64
	toolsets.Return
}

// Returns returns the tool returns recorded in evs (tool.returned events),
// in log order; other events are skipped. A call that suspended for an
// approval or a deferred result has its approval_required or call_deferred
// return first and its final return after the decision; denied and
// externally resolved calls have theirs too. Use it on the events of
// Session.RunStream or Session.Events.
func Returns(evs []events.Event) ([]ToolReturn, error) {
	var out []ToolReturn
	for _, ev := range evs {
		if ev.Type != events.TypeToolReturned {
			continue
		}
		var d events.ToolReturned
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return out, fmt.Errorf("weft: %s v%d: %w: %v", ev.Type, ev.Version, events.ErrMalformed, err)
		}
		tr := ToolReturn{RunID: ev.RunID, Version: ev.Version}
		if err := json.Unmarshal(d.Return, &tr.Return); err != nil {
			return out, fmt.Errorf("weft: %s v%d: %w: return: %v", ev.Type, ev.Version, events.ErrMalformed, err)
		}
		out = append(out, tr)
	}
	return out, nil
}

// Events returns the recorded events of run runID of the session, in
// order, the toolset.closed reports appended after the run's final event
// included. An empty runID returns every event of the session.
func (s *Session) Events(ctx context.Context, runID string) ([]events.Event, error) {
	all, err := s.agent.rt.store.ReadStream(ctx, events.SessionStream(s.id), 0)
	if errors.Is(err, events.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("weft: read session %q: %w", s.id, err)
	}
	if runID == "" {
		return all, nil
	}
	var out []events.Event
	for _, ev := range all {
		if ev.RunID == runID {
			out = append(out, ev)
		}
	}
	return out, nil
}
