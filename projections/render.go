package projections

import (
	"encoding/json"
	"io"
)

// render writes v as indented JSON without HTML escaping (so embedded raw
// JSON keeps its bytes), followed by a newline. encoding/json sorts map
// keys, and the views hand it slices in a fixed order, so equal views
// render to equal bytes.
func render(w io.Writer, name string, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return &Error{Op: "render", Projection: name, Err: err}
	}
	return nil
}
