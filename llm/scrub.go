package llm

import (
	"strings"
	"unicode/utf8"
)

// MinQuotedText is the shortest text of a request ScrubQuotes looks for:
// shorter ones are words a message may hold for its own reasons.
const MinQuotedText = 12

// ScrubQuotes returns a provider's message msg (an error's text, which
// reaches run errors and logs) with every text of req it quotes replaced
// by "[prompt]" — instructions, prompts, answers, tool arguments and
// returns, retry prompts of at least MinQuotedText bytes — and cut to max
// bytes at a rune boundary, "…" marking the cut. Adapters remove their
// secrets first.
func ScrubQuotes(req *Request, msg string, max int) string {
	for _, t := range quotable(req) {
		msg = strings.ReplaceAll(msg, t, "[prompt]")
	}
	if len(msg) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// quotable returns the texts of req a provider's message may quote.
func quotable(req *Request) []string {
	if req == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if len(s) >= MinQuotedText {
			out = append(out, s)
		}
	}
	add(req.Instructions)
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			switch p := p.(type) {
			case Instructions:
				add(p.Text)
			case UserPrompt:
				add(p.Text)
			case Text:
				add(p.Text)
			case ToolCall:
				add(string(p.Arguments))
			case ToolReturn:
				add(p.ContentText())
			case RetryPrompt:
				add(p.Message)
			}
		}
	}
	return out
}
