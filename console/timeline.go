package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// entry is one row of a session's timeline: an event as a person reads
// it. Its strings are text, escaped by the template.
type entry struct {
	Version uint64
	Time    time.Time
	Type    string
	Class   string // run, model, tool, hitl, other
	Run     string
	Call    string
	Anchor  string // the element id a link to the call's request uses
	Title   string
	Text    string // the main text: model text, a tool's return, a reason
	JSON    string // arguments or a result, pretty
	Detail  string // attempts, durations, usage
	// Surfaces are the app and user surfaces and metadata of a tool
	// return (behind the page's toggle); Private its private metadata,
	// shown to approvers only (redacted otherwise).
	Surfaces string
	Private  string
	Redacted string
	Error    bool
}

// timeline turns a session's events (redacted already for a viewer) into
// its rows.
func timeline(evs []events.Event) []entry {
	started := map[string]time.Time{} // call id → first tool.started
	requested := map[string]time.Time{}
	out := make([]entry, 0, len(evs))
	for _, ev := range evs {
		e := entry{Version: ev.Version, Time: ev.Time, Type: string(ev.Type), Run: ev.RunID, Call: ev.ToolCallID, Class: classOf(ev.Type)}
		if len(ev.Redacted) > 0 {
			e.Redacted = "redacted: " + strings.Join(ev.Redacted, ", ")
		}
		// An event whose data does not decode is shown as such, never as a
		// blank row (the stores refuse such data; a log may still hold it).
		var undecoded error
		dec := func(raw json.RawMessage, v any) {
			if err := json.Unmarshal(raw, v); err != nil && undecoded == nil {
				undecoded = err
			}
		}
		switch ev.Type {
		case events.TypeRunStarted:
			var d events.RunStarted
			dec(ev.Data, &d)
			e.Title = "run started: " + d.Agent
			e.Text = jsonText(d.Input)
		case events.TypeRunCompleted:
			var d events.RunCompleted
			dec(ev.Data, &d)
			e.Title, e.Text, e.Detail = "run completed", jsonText(d.Output), usage(d.Usage)
		case events.TypeRunFailed:
			var d events.RunFailed
			dec(ev.Data, &d)
			e.Title, e.Text, e.Error = "run failed: "+d.Error.Kind, d.Error.Message, true
		case events.TypeRunCancelled:
			var d events.RunCancelled
			dec(ev.Data, &d)
			e.Title, e.Text = "run cancelled by "+d.By, d.Reason
		case events.TypeRunWaiting:
			var d events.RunWaiting
			dec(ev.Data, &d)
			e.Title, e.Text = "waiting for "+d.Reason, strings.Join(d.ToolCallIDs, ", ")
		case events.TypeRunResumed:
			e.Title = "resumed"
		case events.TypeModelRequest:
			var d events.ModelRequest
			dec(ev.Data, &d)
			e.Title = "model request: " + d.Model
			var msgs []llm.Message
			if json.Unmarshal(d.Messages, &msgs) == nil && len(msgs) > 0 {
				e.Text = messageText(msgs[len(msgs)-1])
				e.Detail = fmt.Sprintf("%d messages, tools: %s", len(msgs), strings.Join(d.Tools, ", "))
			}
		case events.TypeModelResponse:
			var d events.ModelResponse
			dec(ev.Data, &d)
			e.Title = "model response: " + d.Model
			var m llm.Message
			if json.Unmarshal(d.Message, &m) == nil {
				e.Text = messageText(m)
			}
			e.Detail = strings.TrimSpace("finish: " + d.FinishReason + " " + usage(d.Usage))
			if d.Attempts > 1 {
				e.Detail += fmt.Sprintf(", %d attempts", d.Attempts)
			}
		case events.TypeToolRequested:
			var d events.ToolRequested
			dec(ev.Data, &d)
			requested[ev.ToolCallID] = ev.Time
			e.Anchor = callAnchor(ev.RunID, ev.ToolCallID)
			e.Title, e.JSON = "tool call: "+d.Tool, pretty(d.Args())
		case events.TypeToolStarted:
			var d events.ToolStarted
			dec(ev.Data, &d)
			if _, ok := started[ev.ToolCallID]; !ok {
				started[ev.ToolCallID] = ev.Time
			}
			e.Title, e.Detail = "tool started: "+d.Tool, fmt.Sprintf("attempt %d", d.Attempt)
			if d.Node != "" {
				e.Detail += " on " + d.Node
			}
		case events.TypeToolRetried:
			var d events.ToolRetried
			dec(ev.Data, &d)
			e.Title, e.Text, e.Error = "tool retried: "+d.Tool, d.Error.Message, true
			e.Detail = fmt.Sprintf("attempt %d failed, next in %v", d.Attempt, d.Delay)
		case events.TypeToolReturned:
			var d events.ToolReturned
			dec(ev.Data, &d)
			var ret toolsets.Return
			dec(d.Return, &ret)
			e.Title, e.Error = "tool returned: "+d.Tool+" ("+string(ret.Kind)+")", d.IsError
			e.Text = jsonText(ret.Content)
			if len(ret.ModelOverride) > 0 {
				e.Text = jsonText(ret.ModelOverride)
			}
			from, ok := started[ev.ToolCallID]
			if !ok {
				from = requested[ev.ToolCallID]
			}
			e.Detail = fmt.Sprintf("attempts %d/%d", ret.Attempts, ret.MaxAttempts)
			if !from.IsZero() {
				e.Detail += ", " + ev.Time.Sub(from).Round(time.Millisecond).String()
			}
			e.Surfaces = surfaces(ret)
			if len(ret.PrivateMetadata) > 0 {
				b, _ := json.MarshalIndent(ret.PrivateMetadata, "", "  ")
				e.Private = string(b)
			}
		case events.TypeApprovalRequested:
			var d events.ApprovalRequested
			dec(ev.Data, &d)
			e.Title, e.Text, e.JSON = "approval requested: "+d.Tool, d.Reason, pretty(d.Arguments)
		case events.TypeApprovalDecided:
			var d events.ApprovalDecided
			dec(ev.Data, &d)
			e.Title, e.Text, e.JSON = decisionVerb(d)+" by "+d.By+authTag(d.Authenticated), d.Reason, pretty(d.Arguments)
			e.Error = !d.Approved
		case events.TypeDeferredRequested:
			var d events.DeferredRequested
			dec(ev.Data, &d)
			e.Title, e.JSON = "deferred: "+d.Tool, pretty(d.Arguments)
		case events.TypeDeferredResolved:
			var d events.DeferredResolved
			dec(ev.Data, &d)
			var ret toolsets.Return
			dec(d.Return, &ret)
			e.Title, e.Text, e.Error = "deferred call resolved by "+d.By+authTag(d.Authenticated), jsonText(ret.Content), d.IsError
		case events.TypeUsageSnapshot:
			var d events.UsageSnapshot
			dec(ev.Data, &d)
			e.Title = "usage of the " + d.Scope
			e.Detail = fmt.Sprintf("%d requests, %s, %d tool calls", d.Usage.Requests, usage(&d.Usage), d.Usage.ToolCalls)
		case events.TypeDecisionRefused:
			e.Title, e.Text, e.Error = "decision refused", pretty(ev.Data), true
		default:
			e.Title, e.JSON = string(ev.Type), pretty(ev.Data)
		}
		if undecoded != nil {
			e.Title, e.Text, e.JSON, e.Error = string(ev.Type)+": data does not decode", undecoded.Error(), pretty(ev.Data), true
		}
		out = append(out, e)
	}
	return out
}

// decisionVerb says what an approval decision did: approved or denied.
func decisionVerb(d events.ApprovalDecided) string {
	if d.Approved {
		return "approved"
	}
	return "denied"
}

func authTag(ok bool) string {
	if ok {
		return " (authenticated)"
	}
	return ""
}

func classOf(t events.Type) string {
	s := string(t)
	switch {
	case strings.HasPrefix(s, "run."):
		return "run"
	case strings.HasPrefix(s, "model."):
		return "model"
	case strings.HasPrefix(s, "tool."):
		return "tool"
	case strings.HasPrefix(s, "approval."), strings.HasPrefix(s, "deferred."), strings.HasPrefix(s, "elicitation."), strings.HasPrefix(s, "decision."):
		return "hitl"
	}
	return "other"
}

// messageText is a message's text parts and tool calls, as text.
func messageText(m llm.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		switch p := p.(type) {
		case llm.Text:
			b.WriteString(p.Text)
		case llm.UserPrompt:
			b.WriteString(p.Text)
		case llm.ToolCall:
			fmt.Fprintf(&b, "→ %s(%s)", p.Name, p.Arguments)
		case llm.ToolReturn:
			fmt.Fprintf(&b, "← %s: %s", p.Name, jsonText(p.Content))
		case llm.RetryPrompt:
			fmt.Fprintf(&b, "retry %s: %s", p.Name, p.Message)
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String())
}

func usage(u *events.Usage) string {
	if u == nil {
		return ""
	}
	return fmt.Sprintf("tokens in %d, out %d", u.InputTokens, u.OutputTokens)
}

// surfaces are a return's app value, user content and public metadata.
func surfaces(r toolsets.Return) string {
	var parts []string
	if len(r.AppValue) > 0 {
		parts = append(parts, "app value: "+pretty(r.AppValue))
	}
	if len(r.UserContent) > 0 {
		parts = append(parts, "user content: "+pretty(r.UserContent))
	}
	if len(r.Metadata) > 0 {
		b, _ := json.MarshalIndent(r.Metadata, "", "  ")
		parts = append(parts, "metadata: "+string(b))
	}
	return strings.Join(parts, "\n")
}

// callAnchor is the element id of a call's tool.requested row.
func callAnchor(run, call string) string { return "call-" + run + "-" + call }
