package projections

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
)

// AuditLine is one event of a session's audit timeline.
type AuditLine struct {
	Position uint64      `json:"position"`
	Version  uint64      `json:"version"`
	Time     time.Time   `json:"time"`
	Type     events.Type `json:"type"`
	RunID    string      `json:"run_id,omitempty"`
	CallID   string      `json:"tool_call_id,omitempty"`
	// Tool is the tool of the call (from the event's data, or from the
	// call's tool.requested for events that do not name it).
	Tool string `json:"tool,omitempty"`
	// Outcome is the event's kind or result in a few words: a tool
	// return's kind ("success", "approval_required", …, with " error" for
	// an error), "approved by X", "denied by X: reason", "refused CODE by
	// X: why" (a refused resume, decision.refused), a run's error kind, a
	// finish reason, an attempt number, a toolset's name.
	Outcome string `json:"outcome,omitempty"`
}

// String formats the line as one line of text: time, type, call id, tool
// and outcome, separated by two spaces ("-" for an empty field).
func (l AuditLine) String() string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	return fmt.Sprintf("%6d  %s  %-19s  %s  %s  %s", l.Position, l.Time.UTC().Format(time.RFC3339Nano), l.Type, dash(l.CallID), dash(l.Tool), dash(l.Outcome))
}

// Audit is the audit-timeline projection: one AuditLine per event, per
// session, in log order.
type Audit struct {
	checkpoint
	lines map[string][]AuditLine
	tools map[string]map[string]string // session -> call id -> tool
}

var _ Projection = (*Audit)(nil)

// NewAudit returns an empty audit timeline.
func NewAudit() *Audit {
	return &Audit{lines: map[string][]AuditLine{}, tools: map[string]map[string]string{}}
}

// Name returns "audit".
func (a *Audit) Name() string { return "audit" }

// Reset empties the timeline.
func (a *Audit) Reset() { *a = *NewAudit() }

// Sessions returns the ids of the sessions in the timeline, sorted.
func (a *Audit) Sessions() []string { return slices.Sorted(maps.Keys(a.lines)) }

// Timeline returns session id's lines in log order (do not modify them),
// or ErrUnknownSession.
func (a *Audit) Timeline(id string) ([]AuditLine, error) {
	l, ok := a.lines[id]
	if !ok {
		return nil, &Error{Op: "timeline", Projection: a.Name(), Err: fmt.Errorf("%w: %q", ErrUnknownSession, id)}
	}
	return l, nil
}

// WriteText writes session id's timeline as text, one line per event.
func (a *Audit) WriteText(w io.Writer, id string) error {
	lines, err := a.Timeline(id)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return &Error{Op: "render", Projection: a.Name(), Err: err}
	}
	return nil
}

// Render writes every session's timeline as a JSON object keyed by
// session id.
func (a *Audit) Render(w io.Writer) error { return render(w, a.Name(), a.lines) }

// Apply appends ev's line to its session's timeline. Events without a
// session id only move the checkpoint.
func (a *Audit) Apply(ev Decoded) error {
	if a.seen(ev.Position) {
		return nil
	}
	if ev.SessionID != "" {
		tools := a.tools[ev.SessionID]
		if tools == nil {
			tools = map[string]string{}
			a.tools[ev.SessionID] = tools
		}
		l := AuditLine{Position: ev.Position, Version: ev.Version, Time: ev.Time, Type: ev.Type, RunID: ev.RunID, CallID: ev.ToolCallID}
		l.Tool, l.Outcome = describe(ev)
		if l.Tool == "" {
			l.Tool = tools[ev.ToolCallID]
		} else if ev.ToolCallID != "" {
			tools[ev.ToolCallID] = l.Tool
		}
		a.lines[ev.SessionID] = append(a.lines[ev.SessionID], l)
	}
	a.pos = ev.Position
	return nil
}

// describe returns the tool an event names and its outcome.
func describe(ev Decoded) (tool, outcome string) {
	switch d := ev.Data.(type) {
	case events.RunStarted:
		return "", d.Agent
	case events.RunWaiting:
		return "", d.Reason
	case events.RunCompleted:
		return "", "completed"
	case events.RunFailed:
		return "", joinNonEmpty(": ", d.Error.Kind, d.Error.Message)
	case events.RunCancelled:
		return "", joinNonEmpty(": ", d.By, d.Reason)
	case events.ModelRequest:
		return "", d.Model
	case events.ModelResponse:
		return "", d.FinishReason
	case events.ToolRequested:
		return d.Tool, d.Toolset
	case events.ToolStarted:
		return d.Tool, "attempt " + strconv.Itoa(d.Attempt)
	case events.ToolRetried:
		return d.Tool, "attempt " + strconv.Itoa(d.Attempt) + " " + joinNonEmpty(": ", d.Error.Kind, d.Error.Message)
	case events.ToolReturned:
		ri := ev.returnInfo(d.Return)
		if d.IsError || ri.IsError {
			return d.Tool, ri.Kind + " error"
		}
		return d.Tool, ri.Kind
	case events.ToolProgress:
		return d.Tool, joinNonEmpty(" ", d.Name, d.Message)
	case events.ApprovalRequested:
		return d.Tool, d.Reason
	case events.ApprovalDecided:
		if d.Approved {
			return "", joinNonEmpty(" ", "approved by", d.By)
		}
		return "", joinNonEmpty(": ", joinNonEmpty(" ", "denied by", d.By), d.Reason)
	case events.DecisionRefused:
		return "", refusal(d)
	case events.DeferredRequested:
		return d.Tool, "deferred"
	case events.DeferredResolved:
		verb := "resolved by"
		if d.IsError {
			verb = "failed by"
		}
		return "", joinNonEmpty(" ", verb, d.By)
	case events.ToolsetInitialized:
		return "", d.Toolset
	case events.ToolsetRefreshed:
		return "", d.Toolset
	case events.ToolsetClosed:
		return "", joinNonEmpty(": ", d.Toolset, d.Reason)
	case events.ToolsetUnavailable:
		return "", joinNonEmpty(": ", d.Toolset, d.Error.Message)
	case events.ToolsetFailed:
		return "", joinNonEmpty(": ", d.Toolset, d.Error.Message)
	case events.ToolSearchInitialized:
		return "", d.Toolset
	case events.ToolSearchLoaded:
		return "", joinNonEmpty(": ", d.Query, strings.Join(d.Tools, ","))
	case events.ToolSearchNoMatch:
		return "", d.Query
	case events.ToolSearchFailed:
		return "", joinNonEmpty(": ", d.Query, d.Error.Message)
	case events.UsageSnapshot:
		return "", d.Scope
	}
	return "", ""
}

// refusal describes a refused resume: "refused CODE by WHO: why", WHO
// being the deciders named by its decisions.
func refusal(d events.DecisionRefused) string {
	var by []string
	for _, x := range d.Decisions {
		if x.By != "" && !slices.Contains(by, x.By) {
			by = append(by, x.By)
		}
	}
	who := ""
	if len(by) > 0 {
		who = "by " + strings.Join(by, ",")
	}
	return joinNonEmpty(": ", joinNonEmpty(" ", "refused", d.Code, who), d.Message)
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}
