package actors

import (
	"errors"
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// FailPolicy is the run.failed kind of a run stopped because an approval
// or deferral policy has an entry that matches nothing in a step's
// inventory (toolsets.ErrUnmatchedSelector): the agent's policy, or a
// toolsets.RequireApproval / toolsets.Defer wrapper of one of its
// toolsets. A typo must not let a tool run ungated, so the run stops
// before the model is asked.
const FailPolicy = "policy_error"

// policyName names the agent's approval policy in reasons and errors;
// policyKind is its SelectorError.Policy.
const (
	policyName = "the agent's approval policy"
	policyKind = "approval_policy"
)

// approvalPolicy is an agent's ApprovalRequired list, compiled and
// checked by compilePolicy.
type approvalPolicy struct {
	// sel is nil for an agent without ApprovalRequired entries (a
	// policy is then compiled for its Trusted entries alone).
	sel *toolsets.Selector
	// known are the tools known at registration (loose tools and the
	// tools of the toolsets that can be listed) and ids the identities of
	// every agent toolset: an entry matching them is no typo, even at a
	// step where the tool is absent.
	known []toolsets.Target
	ids   []toolsets.ToolsetInfo
	// complete: every toolset could be listed, so known is everything.
	complete bool
	// trust is the agent's Trusted entries compiled (nil: none).
	trust *toolsets.Selector
}

// compilePolicy builds spec's approval policy and checks it against what
// is known without preparing anything: the loose tools, the identities of
// the toolsets (toolsets.Identities) and the tools of those that can be
// listed (toolsets.KnownTools). When every toolset can be listed, an
// entry that matches nothing is an error here (NewAgent); otherwise such
// an entry may name a tool a dynamic toolset offers later, and it is
// checked at every preparation (approvalStep). Listing a toolset also
// checks the selectors of its approval and deferral wrappers, so their
// typos are refused here too. It returns nil for an agent without a policy.
func compilePolicy(spec *AgentSpec) (*approvalPolicy, error) {
	p := &approvalPolicy{}
	complete := true
	for _, t := range spec.Tools {
		p.known = append(p.known, toolsets.Target{Definition: t.Definition()})
	}
	for _, ts := range spec.Toolsets {
		ids := toolsets.Identities(ts)
		p.ids = append(p.ids, ids...)
		tools, ok, err := toolsets.KnownTools(ts)
		if err != nil {
			return nil, fmt.Errorf("toolset %q: %w", ts.Info().Name, err)
		}
		if !ok {
			complete = false
			continue
		}
		p.known = append(p.known, toolsets.Targets(tools, ids)...)
	}
	p.complete = complete
	if err := checkTrust(spec, p); err != nil {
		return nil, fmt.Errorf("%s: %w", trustName, err)
	}
	if len(spec.ApprovalRequired) == 0 {
		if len(spec.Trusted) == 0 {
			return nil, nil
		}
		return p, nil
	}
	sel, err := toolsets.NewSelector(spec.ApprovalRequired)
	if err != nil {
		return nil, fmt.Errorf("approval policy: %w", err)
	}
	p.sel = sel
	if complete {
		if err := sel.Check(policyKind, p.known, p.ids); err != nil {
			return nil, fmt.Errorf("%s: %w", policyName, err)
		}
	}
	return p, nil
}

// policyOf returns spec's compiled policy: the one Register built, or
// (for a spec used without Register) a new one.
func policyOf(spec *AgentSpec) (*approvalPolicy, error) {
	if spec.approval != nil || len(spec.ApprovalRequired) == 0 && len(spec.Trusted) == 0 {
		return spec.approval, nil
	}
	return compilePolicy(spec)
}

// approvalStep applies the agent's approval policy to a step's inventory:
// loose tools, and sets[i] the prepared tools of lcs[i]. Every entry must
// match a tool, toolset or bundle of the step or one known at
// registration, or the step fails with a *toolsets.SelectorError
// (FailPolicy). It returns the loose tools and sets with the tools the
// policy catches marked as approval-required in their definitions
// (toolsets.MarkApproval; sets is updated, the toolsets' own slices are
// not), and the caught tool names with the entry that caught each.
func approvalStep(spec *AgentSpec, lcs []*toolsets.Lifecycle, loose []toolsets.Tool, sets [][]toolsets.Tool) ([]toolsets.Tool, map[string]string, error) {
	p, err := policyOf(spec)
	if err != nil || p == nil {
		return loose, nil, err
	}
	looseT := toolsets.Targets(loose, nil)
	setT := make([][]toolsets.Target, len(sets))
	all := append([]toolsets.Target(nil), looseT...)
	var ids []toolsets.ToolsetInfo
	for i, lc := range lcs {
		sids := toolsets.Identities(lc.Toolset())
		ids = append(ids, sids...)
		setT[i] = toolsets.Targets(sets[i], sids)
		all = append(all, setT[i]...)
	}
	if p.sel != nil && len(p.sel.Unmatched(all, ids)) > 0 {
		if err := p.sel.Check(policyKind, append(all, p.known...), append(ids, p.ids...)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", policyName, err)
		}
	}
	caught := map[string]string{}
	mark := func(tools []toolsets.Tool, targets []toolsets.Target) []toolsets.Tool {
		if p.sel == nil {
			return tools
		}
		out, copied := tools, false
		for j, t := range targets {
			entry, ok := p.sel.Match(t)
			if !ok {
				continue
			}
			if !copied {
				out, copied = append([]toolsets.Tool(nil), tools...), true
			}
			reason := fmt.Sprintf("%s requires approval for this tool (entry %q)", policyName, entry)
			out[j] = &policyGated{Tool: tools[j], def: toolsets.MarkApproval(t.Definition, reason)}
			caught[t.Definition.Name] = entry
		}
		return out
	}
	loose = mark(loose, looseT)
	for i := range sets {
		sets[i] = mark(sets[i], setT[i])
	}
	if err := checkTrustStep(p, all, ids); err != nil {
		return nil, nil, err
	}
	loose = trustStep(p, looseT, loose, caught)
	for i := range sets {
		sets[i] = trustStep(p, setT[i], sets[i], caught)
	}
	return loose, caught, nil
}

// policyGated shows a tool caught by the agent's approval policy with the
// approval marks in its definition; calls reach the tool (the session
// holds them for approval before they are made, see needsApproval).
type policyGated struct {
	toolsets.Tool
	def toolsets.Definition
}

func (g *policyGated) Definition() toolsets.Definition { return g.def.Clone() }

// needsApproval reports whether the agent's approval policy caught tool
// name in the step's inventory (see approvalStep): an entry equal to "*",
// to the tool's name, to the name or id of its toolset (or of a toolset it
// wraps), or to one of its bundles, through toolsets.Selector. Loose tools
// are covered like toolset tools.
func needsApproval(prep *Prepared, name string) bool {
	if prep == nil {
		return false
	}
	_, ok := prep.Gated[name]
	return ok
}

// prepareFailKind is the run.failed kind of a failed preparation.
func prepareFailKind(err error) string {
	if errors.Is(err, toolsets.ErrUnmatchedSelector) {
		return FailPolicy
	}
	return FailToolset
}
