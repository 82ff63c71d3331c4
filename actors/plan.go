package actors

import "github.com/weft-run/weft/toolsets"

// sequentialBatch decides whether the calls of one model response, in
// model order, run one at a time in that order rather than all
// at once. lookup gives a tool's definition (false for a tool the
// inventory lacks).
//
// The seed's rule: a batch is sequential when a called tool is Sequential,
// or when a tool name appears more than once (so that repeated writes stay
// in order). weft's addition: a repeated tool that is ConcurrentSafe (it
// only reads, or is idempotent) does not make the batch sequential. So a
// batch keeps the seed's order when any called tool is Sequential
// (whatever else it is) or any repeated tool is not ConcurrentSafe,
// unknown tools included.
func sequentialBatch(calls []BatchCall, lookup func(string) (toolsets.Definition, bool)) bool {
	seen := make(map[string]bool, len(calls))
	for _, call := range calls {
		name := call.Tool
		def, known := lookup(name)
		if known && def.Sequential {
			return true
		}
		if seen[name] && !(known && def.ConcurrentSafe) {
			return true
		}
		seen[name] = true
	}
	return false
}
