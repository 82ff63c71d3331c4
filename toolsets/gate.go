package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
)

// Definition metadata keys of gated tools: the tools exposed through
// [RequireApproval] or [Defer], or caught by an agent's approval policy,
// carry them so that hosts, UIs and prompt descriptions can show which
// tools need a person (see [GatingOf]).
const (
	// MetaApprovalRequired is true on a tool whose calls wait for a human
	// approval before they run.
	MetaApprovalRequired = "approval_required"
	// MetaApprovalReason says why (the policy's reason).
	MetaApprovalReason = "approval_reason"
	// MetaDeferredCall is true on a tool whose calls are deferred to an
	// external result.
	MetaDeferredCall = "deferred_call"
	// MetaDeferredReason says why.
	MetaDeferredReason = "deferred_reason"
)

// Gating is what a definition's metadata says about its gates.
type Gating struct {
	Approval       bool
	ApprovalReason string
	Deferred       bool
	DeferredReason string
}

// Gated reports whether any gate applies.
func (g Gating) Gated() bool { return g.Approval || g.Deferred }

// GatingOf reads the gate metadata of d ([MetaApprovalRequired], …).
func GatingOf(d Definition) Gating {
	var g Gating
	g.Approval, _ = d.Metadata[MetaApprovalRequired].(bool)
	g.ApprovalReason, _ = d.Metadata[MetaApprovalReason].(string)
	g.Deferred, _ = d.Metadata[MetaDeferredCall].(bool)
	g.DeferredReason, _ = d.Metadata[MetaDeferredReason].(string)
	return g
}

// MarkApproval returns d with the approval gate metadata set (a copy;
// d's metadata is not changed).
func MarkApproval(d Definition, reason string) Definition {
	return mark(d, MetaApprovalRequired, MetaApprovalReason, reason)
}

// MarkDeferred returns d with the deferral gate metadata set.
func MarkDeferred(d Definition, reason string) Definition {
	return mark(d, MetaDeferredCall, MetaDeferredReason, reason)
}

func mark(d Definition, flag, why, reason string) Definition {
	d.Metadata = maps.Clone(d.Metadata)
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	d.Metadata[flag] = true
	d.Metadata[why] = reason
	return d
}

// RequireApproval makes calls to the tools of ts that entries select (a
// [Selector]: a tool name, a toolset name or id, a bundle, or [AllTools])
// suspend for human approval before they run: the wrapped tool returns
// [ApprovalRequired] with reason unless the call carries an approval
// ([ToolContext.Approval]), in which case the original tool runs. This is
// the runtime's ordinary approval flow; nothing else needs wiring. Tool
// names are names as ts exposes them; toolset names and ids are those of
// ts and of the toolsets it wraps ([Identities]). The gated definitions
// carry [MetaApprovalRequired] and [MetaApprovalReason].
//
// Every entry must match something each time ts is prepared (a tool, a
// bundle, a toolset of [Identities], or a tool ts is known to offer,
// [KnownTools]); otherwise the preparation fails with a [*SelectorError]
// (the runtime fails the run, and NewAgent refuses it already when ts can
// be listed). A typo never leaves a tool ungated. To gate tools a dynamic
// toolset offers only at some steps, name the toolset or a bundle.
func RequireApproval(ts Toolset, entries []string, reason string) (*Wrapped, error) {
	return gated(ts, entries, reason, false)
}

// Defer turns calls to the tools of ts that entries select (as for
// [RequireApproval], with the same check) into deferred work: the wrapped
// tool returns [CallDeferred] with reason, so the runtime suspends the
// call until an external result is supplied. When a call is resumed with
// its result ([ToolContext.Deferred]) the wrapped tool returns that
// result. The gated definitions carry [MetaDeferredCall] and
// [MetaDeferredReason].
func Defer(ts Toolset, entries []string, reason string) (*Wrapped, error) {
	return gated(ts, entries, reason, true)
}

func gated(ts Toolset, entries []string, reason string, deferred bool) (*Wrapped, error) {
	what := "approval_required"
	if deferred {
		what = "deferred"
	}
	if ts == nil {
		return nil, fmt.Errorf("%w: %s: nil toolset", ErrInvalidWrapper, what)
	}
	sel, err := NewSelector(entries)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidWrapper, what, err)
	}
	toolset := ts.Info().Name
	if reason == "" {
		reason = fmt.Sprintf("toolset %q requires it", toolset)
	}
	ids := Identities(ts)
	var w *Wrapped
	w = wrap(ts, what, func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		targets := Targets(p.Tools, ids)
		if len(sel.Unmatched(targets, ids)) > 0 {
			// Tools ts may offer at another step count as existing.
			known, _, err := KnownTools(ts)
			if err != nil {
				return Preparation{}, err
			}
			if err := sel.Check(what, append(targets, Targets(known, ids)...), ids); err != nil {
				return Preparation{}, err
			}
		}
		tools := make([]Tool, len(p.Tools))
		for i, t := range p.Tools {
			if _, ok := sel.Match(targets[i]); !ok {
				tools[i] = t
				continue
			}
			tools[i], _ = w.wrapTool(t, func(t Tool) (Tool, error) {
				return newGate(t, deferred, reason, toolset), nil
			})
		}
		return Preparation{Tools: tools, Instructions: p.Instructions}, nil
	})
	return w, nil
}

// gate suspends calls for approval or deferral before they reach inner.
type gate struct {
	inner    Tool
	def      Definition
	deferred bool
	reason   string
	toolset  string
}

func newGate(inner Tool, deferred bool, reason, toolset string) *gate {
	def := inner.Definition()
	if deferred {
		def = MarkDeferred(def, reason)
	} else {
		def = MarkApproval(def, reason)
	}
	return &gate{inner: inner, def: def, deferred: deferred, reason: reason, toolset: toolset}
}

func (g *gate) Definition() Definition { return g.def.Clone() }

func (g *gate) Call(ctx context.Context, tc *ToolContext, args json.RawMessage) (any, error) {
	meta := map[string]any{"toolset": g.toolset, "tool": tc.ToolName}
	if !g.deferred {
		if tc.Approval == nil {
			return nil, ApprovalRequired(g.reason, meta)
		}
		return g.inner.Call(ctx, tc, args)
	}
	if tc.Deferred == nil {
		return nil, CallDeferred(g.reason, meta)
	}
	res := Result{Metadata: tc.Deferred.Metadata}
	if len(tc.Deferred.Value) > 0 {
		res.Content = tc.Deferred.Value
	}
	return res, nil
}
