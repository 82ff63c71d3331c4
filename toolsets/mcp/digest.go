package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/weft-run/weft/toolsets"
)

// digestOf is the digest of an inventory: "sha256:" and the hex SHA-256
// of the JSON list of the tools' names and parameter schemas, sorted by
// name. It holds nothing but what the model sees of the tools (no header,
// environment value or URL), so it can be logged; two listings with the
// same names and schemas have the same digest.
func digestOf(tools []toolsets.Tool) string {
	type entry struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	entries := make([]entry, 0, len(tools))
	for _, t := range tools {
		d := t.Definition()
		params := d.Parameters
		if c, err := toolsets.CanonicalArguments(params); err == nil {
			params = c
		}
		entries = append(entries, entry{Name: d.Name, Parameters: params})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	b, _ := json.Marshal(entries)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
