package console

import (
	"bytes"
	"encoding/json"
	"html/template"
	"strings"
	"time"
)

// jsonIndent indents raw (kept as it is when it is not JSON).
func jsonIndent(dst []byte, raw json.RawMessage) string {
	buf := bytes.NewBuffer(dst)
	if err := json.Indent(buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

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
	"join": strings.Join,
	"list": func(s ...string) []string { return s },
	// pair hands a pending item's template the page's view with the item.
	"pair": func(v view, i item) itemView { return itemView{V: v, I: i} },
	"has":  func(roles []string, r string) bool { return contains(roles, r) },
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// itemView is what the item template gets.
type itemView struct {
	V view
	I item
}
