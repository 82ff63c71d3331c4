package actors

import (
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// ToolConflictError is a run's preparation that offers one tool name twice:
// in two toolsets, or in a toolset and the agent's own (loose) tools. The
// later toolset's lifecycle report is recorded as toolset.failed with this
// message, and the run fails with it (kind toolset_error). It matches
// toolsets.ErrDuplicateTool.
type ToolConflictError struct {
	// Tool is the name offered twice.
	Tool string
	// First is the toolset that offered it first, "" for the agent's own
	// tools; Second the toolset that offered it again.
	First, Second string
}

func (e *ToolConflictError) Error() string {
	first := "the agent's own tools"
	if e.First != "" {
		first = fmt.Sprintf("toolset %q", e.First)
	}
	return fmt.Sprintf("tool %q is offered by %s and by toolset %q: tool names must be unique in a run (rename or prefix one of them)", e.Tool, first, e.Second)
}

// Unwrap returns toolsets.ErrDuplicateTool.
func (e *ToolConflictError) Unwrap() error { return toolsets.ErrDuplicateTool }

// offered is what one prepared toolset offers: its name and tool names.
type offered struct {
	toolset string
	tools   []string
}

// toolConflicts decides which toolsets of a preparation conflict: for each
// toolset (by its index in sets, in the agent's order) that offers a tool
// name the agent's own tools (loose) or an earlier toolset already offer,
// the first such conflict. The earlier owner keeps the name; nil means
// none conflicts.
func toolConflicts(loose []string, sets []offered) map[int]*ToolConflictError {
	owner := make(map[string]string, len(loose))
	for _, n := range loose {
		owner[n] = ""
	}
	var out map[int]*ToolConflictError
	for i, s := range sets {
		for _, n := range s.tools {
			first, taken := owner[n]
			if !taken {
				continue
			}
			if out == nil {
				out = map[int]*ToolConflictError{}
			}
			out[i] = &ToolConflictError{Tool: n, First: first, Second: s.toolset}
			break
		}
		if out[i] != nil {
			continue // its names are not offered
		}
		for _, n := range s.tools {
			owner[n] = s.toolset
		}
	}
	return out
}
