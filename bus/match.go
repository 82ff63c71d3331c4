package bus

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// SubjectMatches reports whether subject matches the NATS subject filter
// filter: a '*' token matches any one token, a last '>' token matches one
// or more tokens, any other token only itself. It is the server's own
// matcher (server.SubjectMatchesFilter), so what a subscriber selects
// here is what a NATS subscription with filter would receive; it
// allocates nothing for subjects of up to 32 tokens.
func SubjectMatches(filter, subject string) bool {
	return server.SubjectMatchesFilter(subject, filter)
}

// ErrBadEventFilter is matched (errors.Is) by every error of
// CheckEventFilter.
var ErrBadEventFilter = errors.New("bus: bad event subject filter")

// FilterError reports a subject filter that is not a NATS subject filter,
// or one that can match no event subject.
type FilterError struct {
	Filter string
	Reason string
}

func (e *FilterError) Error() string {
	return fmt.Sprintf("bus: bad event subject filter %q: %s", e.Filter, e.Reason)
}

// Is reports whether target is ErrBadEventFilter.
func (e *FilterError) Is(target error) bool { return target == ErrBadEventFilter }

// CheckEventFilter checks that filter is a valid NATS subject filter
// (non-empty tokens, no white space or control characters, '*' and '>'
// only as whole tokens, '>' only last) and that it can match an event
// subject of s (<root>.evt.<category>.<id>.<type tokens>). It returns nil
// or a *FilterError.
func (s Subjects) CheckEventFilter(filter string) error {
	bad := func(format string, args ...any) error {
		return &FilterError{Filter: filter, Reason: fmt.Sprintf(format, args...)}
	}
	if filter == "" {
		return bad("empty")
	}
	if i := strings.IndexFunc(filter, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return bad("white space or a control character at byte %d", i)
	}
	toks := strings.Split(filter, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return bad("empty token %d (two dots in a row, or a dot at an end)", i+1)
		case t == ">" && i != len(toks)-1:
			return bad("'>' must be the last token")
		case t != "*" && t != ">" && strings.ContainsAny(t, "*>"):
			return bad("token %q: '*' and '>' must be whole tokens", t)
		}
	}
	// Event subjects are <root tokens>.evt.<category>.<id>.<type tokens>.
	want := append(strings.Split(s.root, "."), "evt")
	for i, w := range want {
		if i >= len(toks) {
			return bad("too short to match an event subject (%s.<category>.<id>.<type>)", strings.Join(want, "."))
		}
		switch toks[i] {
		case ">":
			return nil
		case "*", w:
			continue
		}
		return bad("matches no event: event subjects are %s.<category>.<id>.<type>, e.g. %s.session.*.tool.returned", strings.Join(want, "."), strings.Join(want, "."))
	}
	if rest := toks[len(want):]; len(rest) == 0 || len(rest) < 3 && rest[len(rest)-1] != ">" {
		return bad("too short to match an event subject (%s.<category>.<id>.<type>); end it with '>' to match the rest", strings.Join(want, "."))
	}
	return nil
}
