package actors

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/weft-run/weft/events"
)

// MetaParent is the run-metadata key under which a sub-run (an agent
// called as a tool of another run) names its parent: a ParentRef. The
// session core copies it into run.started's parent fields.
const MetaParent = "weft.parent"

// ParentRef names the tool call of a parent run that started a sub-run.
type ParentRef struct {
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
	// Depth is the sub-run's depth under the root run (1: a child of a
	// root run).
	Depth int `json:"depth"`
}

// parentOf reads the ParentRef of run metadata md (zero when it has none
// or it does not decode).
func parentOf(md map[string]any) ParentRef {
	v, ok := md[MetaParent]
	if !ok {
		return ParentRef{}
	}
	return ParentFrom(v)
}

// ParentFrom reads a ParentRef from the value of run metadata MetaParent
// (zero when it does not decode).
func ParentFrom(v any) ParentRef { return refFrom[ParentRef](v) }

// refFrom reads a T from a metadata value: a T, a *T, its JSON, or
// anything that encodes to its JSON (the map a T decodes to from the
// log); zero when v is nil or does not decode.
func refFrom[T any](v any) T {
	var r T
	switch x := v.(type) {
	case nil:
		return r
	case T:
		return x
	case *T:
		if x != nil {
			return *x
		}
		return r
	case json.RawMessage:
		if json.Unmarshal(x, &r) != nil {
			var zero T
			return zero
		}
	default:
		b, err := json.Marshal(x)
		if err != nil || json.Unmarshal(b, &r) != nil {
			var zero T
			return zero
		}
	}
	return r
}

// ParentOf returns the parent of a run with metadata md, and whether it
// is a sub-run.
func ParentOf(md map[string]any) (ParentRef, bool) {
	p := parentOf(md)
	return p, p.SessionID != ""
}

// MetaSubrun is the key of the deferred-call metadata that names the
// child run a parent's call waits for: a SubrunRef. The HITL queue shows
// such an item as waiting for the sub-run.
const MetaSubrun = "weft.subrun"

// SubrunRef names the child run (sub-run) a parent's call waits for.
type SubrunRef struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	Agent     string `json:"agent"`
	// Depth is the child's depth under the root run.
	Depth int `json:"depth"`
}

// SubrunFrom reads a SubrunRef from the value of deferred-call metadata
// MetaSubrun: a SubrunRef, the map it encodes to, or its JSON (zero when
// it does not decode).
func SubrunFrom(v any) SubrunRef { return refFrom[SubrunRef](v) }

// fill sets the parent fields of run.started.
func (p ParentRef) fill(d *events.RunStarted) {
	if p.SessionID == "" {
		return
	}
	d.ParentSessionID, d.ParentRunID, d.ParentToolCallID, d.Depth = p.SessionID, p.RunID, p.ToolCallID, p.Depth
}

// OnSettled registers fn to hear every outcome this host tells its
// watchers (a run waiting, or ended), on whichever node settles it; not a
// lost run (Outcome.Lost), which did not settle. fn is
// called on the session actor's goroutine: it must not block (start its
// work with Go).
func (h *Host) OnSettled(fn func(Outcome)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observers = append(h.observers, fn)
}

// Go runs fn in a goroutine that Close waits for; ctx ends when Close
// begins.
func (h *Host) Go(fn func(ctx context.Context)) {
	h.background(func() {
		ctx, cancel := context.WithCancel(h.life) // life ends when Close begins
		defer cancel()
		fn(ctx)
	})
}

// Logger returns the host's logger.
func (h *Host) Logger() *slog.Logger { return h.log }

// addUsage adds the usage of a deferred result (a sub-run's) to u.
func addUsage(u *events.Usage, add *events.Usage) {
	if add == nil {
		return
	}
	u.Requests += add.Requests
	u.InputTokens += add.InputTokens
	u.OutputTokens += add.OutputTokens
	u.CacheReadTokens += add.CacheReadTokens
	u.CacheWriteTokens += add.CacheWriteTokens
	u.ToolCalls += add.ToolCalls
}

// negativeUsage reports whether a field of u is negative.
func negativeUsage(u events.Usage) bool {
	return u.Requests < 0 || u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || u.ToolCalls < 0
}
