package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/weft-run/weft/toolsets"
)

// trustName names the agent's opt-out of its tools' own approval gates in
// errors; trustKind is its SelectorError.Policy.
const (
	trustName = "the agent's trusted tools"
	trustKind = "trusted_tools"
)

// checkTrust checks spec's Trusted entries against what is known at
// registration (as compilePolicy does for the approval policy): an entry
// that matches nothing is refused when every toolset can be listed, and
// otherwise at every preparation (trustStep).
func checkTrust(spec *AgentSpec, p *approvalPolicy) error {
	if len(spec.Trusted) == 0 {
		return nil
	}
	sel, err := toolsets.NewSelector(spec.Trusted)
	if err != nil {
		return fmt.Errorf("trusted tools: %w", err)
	}
	p.trust = sel
	if p.complete {
		return sel.Check(trustKind, p.known, p.ids)
	}
	return nil
}

// checkTrustStep checks the Trusted entries against a step's inventory
// (all its targets, ids its toolsets' identities) and what was known at
// registration: an entry that matches none of them fails the step.
func checkTrustStep(p *approvalPolicy, all []toolsets.Target, ids []toolsets.ToolsetInfo) error {
	if p.trust == nil || len(p.trust.Unmatched(all, ids)) == 0 {
		return nil
	}
	if err := p.trust.Check(trustKind, append(all, p.known...), append(ids, p.ids...)); err != nil {
		return fmt.Errorf("%s: %w", trustName, err)
	}
	return nil
}

// trustStep applies the agent's Trusted entries (p.trust, checked against
// the step by checkTrustStep) to the tools of one toolset of a step (or
// its loose tools), targets their selector targets: a tool they select
// and that the agent's approval policy did not catch (caught; an explicit
// policy is never loosened) reaches its calls with an approval from the
// agent's policy, so that its own gate (a toolset's default, such as an
// MCP tool annotated destructive or an environment toolset's writes) lets
// them run; its definition loses the gate marks.
func trustStep(p *approvalPolicy, targets []toolsets.Target, tools []toolsets.Tool, caught map[string]string) []toolsets.Tool {
	if p.trust == nil {
		return tools
	}
	out, copied := tools, false
	for j, t := range targets {
		entry, ok := p.trust.Match(t)
		if _, policy := caught[t.Definition.Name]; !ok || policy {
			continue
		}
		if !copied {
			out, copied = append([]toolsets.Tool(nil), tools...), true
		}
		def := t.Definition.Clone()
		def.Metadata = maps.Clone(def.Metadata)
		delete(def.Metadata, toolsets.MetaApprovalRequired)
		delete(def.Metadata, toolsets.MetaApprovalReason)
		out[j] = &trustedTool{Tool: tools[j], def: def, by: fmt.Sprintf("%s (entry %q)", trustName, entry)}
	}
	return out
}

// trustedTool is a tool the agent trusts (AgentSpec.Trusted): a call
// without an approval reaches it with one decided by the agent's policy.
type trustedTool struct {
	toolsets.Tool
	def toolsets.Definition
	by  string
}

func (t *trustedTool) Definition() toolsets.Definition { return t.def.Clone() }

func (t *trustedTool) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	if tc.Approval == nil {
		c := *tc
		c.Approval = &toolsets.Approval{DecidedBy: t.by}
		tc = &c
	}
	return t.Tool.Call(ctx, tc, args)
}
