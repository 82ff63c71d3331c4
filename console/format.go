package console

import (
	"encoding/json"
	"html/template"
	"strings"
	"time"
)

// jsonText returns a JSON string's text, or the JSON itself indented.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return pretty(raw)
}

var funcs = template.FuncMap{
	"clock": func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
	"stamp": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short": func(s string) string {
		if len(s) > 13 {
			return s[:8] + "…"
		}
		return s
	},
	"join":   strings.Join,
	"anchor": callAnchor,
	"list":   func(s ...string) []string { return s },
	// pair hands a pending item's template the page's view with the item.
	"pair": func(v view, i item) itemView { return itemView{V: v, I: i} },
}

// itemView is what the item template gets.
type itemView struct {
	V view
	I item
}
