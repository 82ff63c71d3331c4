package weft

import "github.com/weft-run/weft/actors"

// UsageLimits bound the usage of one run. Each field is a Limit whose zero
// value means no limit, so UsageLimits{} limits nothing; AtMost(n) allows
// at most n, and AtMost(0) allows none: ToolCalls: AtMost(0) is a run that
// may not call any tool. A run that reaches a limit fails with kind
// usage_limit_exceeded:
//
//   - Requests is checked before each model request (AtMost(0): the run
//     fails before its first request);
//   - ToolCalls is checked for a whole model response before any of its
//     calls starts, so no call of a response that would exceed it runs;
//   - InputTokens, OutputTokens and TotalTokens are checked after every
//     model response.
type UsageLimits struct {
	Requests, ToolCalls                    Limit
	InputTokens, OutputTokens, TotalTokens Limit
}

// Limit is one bound of UsageLimits. The zero value means no limit; build
// a limit with AtMost.
type Limit struct {
	max int64
	set bool
}

// AtMost returns the limit that allows at most n (requests, tool calls or
// tokens). AtMost(0) allows none; a negative n counts as 0.
func AtMost(n int64) Limit { return Limit{max: max(n, 0), set: true} }

// Max returns the most the limit allows, and false when there is no
// limit.
func (l Limit) Max() (n int64, limited bool) { return l.max, l.set }

// ptr is the limit as the runtime takes it: nil for no limit.
func (l Limit) ptr() *int64 {
	if !l.set {
		return nil
	}
	n := l.max
	return &n
}

// spec returns the limits as the runtime takes them.
func (u UsageLimits) spec() actors.Limits {
	return actors.Limits{Requests: u.Requests.ptr(), ToolCalls: u.ToolCalls.ptr(),
		InputTokens: u.InputTokens.ptr(), OutputTokens: u.OutputTokens.ptr(), TotalTokens: u.TotalTokens.ptr()}
}
