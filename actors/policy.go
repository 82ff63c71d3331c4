package actors

import "github.com/weft-run/weft/toolsets"

// needsApproval reports whether the agent's approval policy covers a call
// of tool name: an entry equal to "*", to the tool's name, to its
// toolset's name or id, or to its metadata bundle (Definition.Metadata
// ["bundle"], a string or a list of strings). Loose tools are covered like
// toolset tools.
func needsApproval(policy []string, prep *Prepared, name string) bool {
	if len(policy) == 0 {
		return false
	}
	var bundles []string
	var ts toolsets.ToolsetInfo
	var inToolset bool
	if prep != nil {
		ts, inToolset = prep.ToolsetOf[name]
		if def, ok := prep.Registry.Lookup(name); ok {
			switch b := def.Metadata["bundle"].(type) {
			case string:
				bundles = append(bundles, b)
			case []string:
				bundles = append(bundles, b...)
			case []any:
				for _, v := range b {
					if s, ok := v.(string); ok {
						bundles = append(bundles, s)
					}
				}
			}
		}
	}
	for _, e := range policy {
		switch {
		case e == "*", e == name:
			return true
		case inToolset && (e == ts.Name || e == ts.ID):
			return true
		}
		for _, b := range bundles {
			if e == b {
				return true
			}
		}
	}
	return false
}
