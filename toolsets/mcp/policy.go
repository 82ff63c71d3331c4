package mcp

import (
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// policy is what a tool's annotations and declaration decide.
type policy struct {
	// concurrent: the tool may run in parallel with itself (readOnly).
	concurrent bool
	sequential bool
	// approval: every call waits for a human approval first.
	approval bool
	reason   string
	// resend: a call whose connection was lost may be sent again
	// (readOnly or idempotent).
	resend bool
}

// hints are the combined annotations of a tool.
type hints struct {
	readOnly, destructive, idempotent bool
}

// combine merges the annotations of every source (a declared spec, the
// server's listing): a permissive hint (readOnly, idempotent) holds only
// when every source that exists sets it, a restrictive one (destructive)
// when any source sets it or leaves it unset while readOnly is false.
func combine(sources ...*Annotations) hints {
	h := hints{readOnly: true, idempotent: true}
	any := false
	for _, a := range sources {
		if a == nil {
			continue
		}
		any = true
		ro := a.ReadOnly != nil && *a.ReadOnly
		h.readOnly = h.readOnly && ro
		h.idempotent = h.idempotent && a.Idempotent != nil && *a.Idempotent
		// The spec: destructiveHint defaults to true, and is meaningful
		// only when readOnlyHint is false.
		if !ro && (a.Destructive == nil || *a.Destructive) {
			h.destructive = true
		}
	}
	if !any {
		return hints{destructive: true}
	}
	if h.readOnly {
		h.destructive = false
	}
	return h
}

// decide returns the policy of a tool of server c with hints h and
// declaration spec (zero when undeclared).
func decide(c *Config, h hints, spec ToolSpec, name string) policy {
	p := policy{
		sequential: spec.Sequential,
		concurrent: h.readOnly && !spec.Sequential,
		resend:     h.readOnly || h.idempotent,
	}
	switch {
	case spec.ApprovalRequired:
		p.approval, p.reason = true, fmt.Sprintf("MCP tool %q of server %q is declared approval-required", name, c.Name)
	case h.destructive && !c.TrustDestructive:
		p.approval, p.reason = true, fmt.Sprintf("MCP tool %q of server %q may be destructive (destructiveHint true or unset)", name, c.Name)
	}
	return p
}

// apply sets p's flags on def.
func (p policy) apply(def toolsets.Definition) toolsets.Definition {
	def.Sequential = def.Sequential || p.sequential
	def.ConcurrentSafe = p.concurrent && !def.Sequential
	if p.approval {
		def = toolsets.MarkApproval(def, p.reason)
	}
	return def
}
