package llm

import "testing"

func TestScrubQuotes(t *testing.T) {
	req := &Request{Instructions: "You are the billing agent.", Messages: []Message{UserMessage("refund order 4711 for Mrs Smith"), UserMessage("short")}}
	for _, tc := range []struct {
		msg  string
		max  int
		want string
	}{
		{`bad request: "refund order 4711 for Mrs Smith" is too long`, 200, `bad request: "[prompt]" is too long`},
		{"system: You are the billing agent.", 200, "system: [prompt]"},
		{"short words stay short", 200, "short words stay short"},
		{"ééééé", 5, "éé…"}, // cut at a rune boundary
	} {
		if got := ScrubQuotes(req, tc.msg, tc.max); got != tc.want {
			t.Errorf("ScrubQuotes(%q, %d) = %q, want %q", tc.msg, tc.max, got, tc.want)
		}
	}
}
