package agentspec

import (
	"maps"
	"slices"
)

// Changes is what a new version of a spec file changes, by agent name
// (each list sorted): what a reload does with each agent.
type Changes struct {
	// Added are declared only in the new file; Removed only in the old.
	Added, Removed []string
	// Changed are in both with another version (File.AgentVersion);
	// Unchanged in both with the same.
	Changed, Unchanged []string
}

// Compare returns what next changes of prev's agents.
func Compare(prev, next *File) Changes {
	pv, nv := prev.Versions(), next.Versions()
	var c Changes
	for _, name := range slices.Sorted(maps.Keys(nv)) {
		v, ok := pv[name]
		switch {
		case !ok:
			c.Added = append(c.Added, name)
		case v != nv[name]:
			c.Changed = append(c.Changed, name)
		default:
			c.Unchanged = append(c.Unchanged, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pv)) {
		if _, ok := nv[name]; !ok {
			c.Removed = append(c.Removed, name)
		}
	}
	return c
}
