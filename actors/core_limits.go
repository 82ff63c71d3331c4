package actors

import (
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// The run's limits and budgets (Limits, the tools' retry budgets, the
// output budget), as the core checks them. Each returns the decision that
// fails the run, and whether the limit is reached.

// retryExceeded fails run r, a tool of which spent its model-retry budget.
func (k core) retryExceeded(r *RunState) decision {
	lim := 0
	for _, cs := range r.Batch {
		if cs.Tool == r.RetryExceeded && cs.Return != nil {
			lim = cs.Return.MaxAttempts - 1
		}
	}
	return k.fail(r, FailToolRetryLimit, fmt.Sprintf("tool %q exceeded its retry budget of %d in this run", r.RetryExceeded, lim))
}

// outputExceeded fails run r, whose outputs were rejected more often than
// the agent's budget allows.
func (k core) outputExceeded(r *RunState, spec *AgentSpec) decision {
	return k.fail(r, FailOutputRetryLimit, fmt.Sprintf("the run's output was rejected %d times; the budget is %d", r.OutputRejections, outputBudget(spec)))
}

// requestLimit: the next model request would exceed Limits.Requests.
func (k core) requestLimit(r *RunState, spec *AgentSpec) (decision, bool) {
	if lim := spec.Limits.Requests; exceeds(int64(r.Step)+r.SubrunRequests+1, lim) {
		return k.fail(r, FailUsageLimit, fmt.Sprintf("the run reached its limit of %d model requests", *lim)), true
	}
	return decision{}, false
}

// responseLimit returns why the run fails once response resp is counted
// in usage (the run's usage with resp's): a token limit exceeded, a tool
// call without tools, more tool calls than Limits.ToolCalls allows. kind
// is "" when none applies. A rejected output is not checked against the
// tool limits (it has no calls).
func (k core) responseLimit(spec *AgentSpec, usage events.Usage, resp *llm.Response) (kind, msg string) {
	lim := spec.Limits
	switch {
	case exceeds(usage.InputTokens, lim.InputTokens),
		exceeds(usage.OutputTokens, lim.OutputTokens),
		exceeds(usage.InputTokens+usage.OutputTokens, lim.TotalTokens):
		return FailUsageLimit, "the run exceeded its token limit"
	case len(resp.ToolCalls) == 0:
		return "", ""
	case !k.f.prep.HasTools():
		return FailNoTools, fmt.Sprintf("the model called %q but the agent has no tools", resp.ToolCalls[0].Name)
	case exceeds(usage.ToolCalls+int64(len(resp.ToolCalls)), lim.ToolCalls):
		return FailUsageLimit, fmt.Sprintf("the response asks for %d tool calls; the run has used %d of its limit of %d", len(resp.ToolCalls), usage.ToolCalls, *lim.ToolCalls)
	}
	return "", ""
}
