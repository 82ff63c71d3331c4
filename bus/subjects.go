package bus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file (with node.go) is where weft names NATS subjects; the worker
// subjects are built beside the worker protocol's messages in package
// protocol (protocol/subjects.go) and documented in docs/worker-protocol.md.
//
// Subject scheme (Root is "weft" unless a Subjects value says otherwise):
//
//	<root>.evt.<category>.<id>.<type tokens>   event of stream "<category>-<id>": its live copy
//	                                            (private surfaces redacted) and its stored subject
//	<root>.log.<category>.<id>.<type tokens>   where the JetStream store publishes the event to store it
//	                                            whole (the stream maps it to its evt subject)
//	<root>.evt.>                                every event
//	<root>.evt.<category>.<id>.>                every event of one stream
//	<root>.evt.<category>.*.<type tokens>       one event type across a category
//	<root>.delta.<category>.<id>                live model output (text and tool-call argument
//	                                            deltas) of stream "<category>-<id>": never stored
//	<root>.delta.>                              every stream's live model output
//	<root>.cmd.session.<id>.<verb>              command to a session actor
//	<root>.cmd.session.*.*                      every command (AllCommands)
//	<root>.node.<node>.cmd.session.<id>.<verb>  command forwarded to its owner node (node.go)
//	<root>.node.<node>.tool.<name>              unused: local tool calls run in-process (node.go, deprecated)
//	<root>.worker.call.<tool>                   remote tool call, queue group weft-workers
//	<root>.worker.cancel.<session>.<run>.<call> cancel of a remote call
//	<root>.worker.describe                      workers describe their tools
//	<inbox>.<n>                                 reply subject n under a NATS inbox
//	<inbox>.*                                   every reply under it (ReplyFilter)
//
// Stream names map to (category, id) reversibly (see StreamTokens): a name
// "<category>-<id>" whose category is a lowercase word ([a-z][a-z0-9_]*)
// and whose id is not empty maps to that category, so "session-42" is
// category "session", id "42". Every other name, such as "audit" or
// "Session-42", maps to category "_" with the whole name as id. "_" is never
// a category of the first form, so no two stream names share a subject.
//
// Ids, tool names and the ids of stream names are escaped with EscapeToken.

// Root is the first token of every weft subject in the default scheme.
const Root = "weft"

// OtherCategory is the category of stream names that are not of the form
// "<category>-<id>".
const OtherCategory = "_"

// ErrInvalidToken is matched (errors.Is) by every error about a value that
// cannot become a subject token: an empty id, a bad escape sequence, an
// event type or verb that is not a lowercase dotted name.
var ErrInvalidToken = errors.New("bus: invalid subject token")

// TokenError reports a value that cannot be used in a subject.
type TokenError struct {
	What   string // "id", "event type", "verb", "subject", …
	Value  string
	Reason string
}

func (e *TokenError) Error() string {
	return fmt.Sprintf("bus: invalid %s %q: %s", e.What, e.Value, e.Reason)
}

// Is reports whether target is ErrInvalidToken.
func (e *TokenError) Is(target error) bool { return target == ErrInvalidToken }

const escapeChar = '%'

// needsEscape reports whether byte c may not appear as itself in an escaped
// token: anything outside printable ASCII, the token separator '.', the
// wildcards '*' and '>', and the escape character itself.
func needsEscape(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == escapeChar
}

const hexDigits = "0123456789ABCDEF"

// EscapeToken turns any non-empty string into one valid NATS subject token,
// reversibly: every byte that needsEscape (white space, control characters,
// bytes outside printable ASCII, '.', '*', '>' and '%') becomes "%XX" with
// two upper-case hex digits; every other byte stays as it is. So "a.b c"
// becomes "a%2Eb%20c". The empty string cannot be a token and is rejected
// with a *TokenError.
func EscapeToken(s string) (string, error) {
	if s == "" {
		return "", &TokenError{What: "id", Value: s, Reason: "empty"}
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b.WriteByte(escapeChar)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// UnescapeToken reverses EscapeToken. It accepts only the canonical form
// EscapeToken produces (upper-case hex, and only bytes that needed
// escaping), so every id has exactly one token.
func UnescapeToken(tok string) (string, error) {
	if !ValidToken(tok) {
		return "", &TokenError{What: "token", Value: tok, Reason: "not a valid subject token"}
	}
	if strings.IndexByte(tok, escapeChar) < 0 {
		return tok, nil
	}
	var b strings.Builder
	b.Grow(len(tok))
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c != escapeChar {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(tok) {
			return "", &TokenError{What: "token", Value: tok, Reason: "truncated escape"}
		}
		hi, lo := strings.IndexByte(hexDigits, tok[i+1]), strings.IndexByte(hexDigits, tok[i+2])
		if hi < 0 || lo < 0 {
			return "", &TokenError{What: "token", Value: tok, Reason: "bad escape " + tok[i:i+3]}
		}
		d := byte(hi<<4 | lo)
		if !needsEscape(d) {
			return "", &TokenError{What: "token", Value: tok, Reason: "non-canonical escape " + tok[i:i+3]}
		}
		b.WriteByte(d)
		i += 2
	}
	return b.String(), nil
}

// ValidToken reports whether tok is a token EscapeToken can produce: not
// empty, printable ASCII only, and no '.', '*' or '>'. (It does not check
// that escapes are well formed; UnescapeToken does.)
func ValidToken(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if needsEscape(c) && c != escapeChar {
			return false
		}
	}
	return true
}

// isWord reports whether s is a lowercase word: [a-z][a-z0-9_-]*.
func isWord(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isCategory reports whether s is a category of the "<category>-<id>"
// form: [a-z][a-z0-9_]* (no '-', which separates it from the id).
func isCategory(s string) bool { return isWord(s) && !strings.Contains(s, "-") }

// checkDotted checks that s is one or more lowercase words joined by '.',
// like the event type "tool.returned".
func checkDotted(what, s string) error {
	if s == "" {
		return &TokenError{What: what, Value: s, Reason: "empty"}
	}
	for rest := s; ; {
		w, more, found := strings.Cut(rest, ".")
		if !isWord(w) {
			return &TokenError{What: what, Value: s, Reason: "each dot-separated part must be a lowercase word [a-z][a-z0-9_-]*"}
		}
		if !found {
			return nil
		}
		rest = more
	}
}

// StreamTokens maps a stream name to its (category, escaped id) subject
// tokens; see the scheme at the top of this file.
func StreamTokens(stream string) (category, id string, err error) {
	category, rest := OtherCategory, stream
	if c, r, ok := strings.Cut(stream, "-"); ok && r != "" && isCategory(c) {
		category, rest = c, r
	}
	id, err = EscapeToken(rest)
	if err != nil {
		return "", "", &TokenError{What: "stream name", Value: stream, Reason: "empty"}
	}
	return category, id, nil
}

// StreamName is the inverse of StreamTokens: it rebuilds the stream name
// from a category token and an escaped id token.
func StreamName(category, id string) (string, error) {
	raw, err := UnescapeToken(id)
	if err != nil {
		return "", err
	}
	if category == OtherCategory {
		return raw, nil
	}
	if !isCategory(category) {
		return "", &TokenError{What: "category", Value: category, Reason: "not a lowercase word"}
	}
	return category + "-" + raw, nil
}

// Subjects builds subject names under a root. The zero value is not
// usable; use Default or NewSubjects.
type Subjects struct {
	root string
}

// Default is the subject scheme rooted at Root ("weft").
var Default = Subjects{root: Root}

// NewSubjects returns a scheme rooted at root: one or more dot-separated
// lowercase words, such as "weft" or "test7.weft" (tests use a private
// root so that they can share one server).
func NewSubjects(root string) (Subjects, error) {
	if err := checkDotted("subject root", root); err != nil {
		return Subjects{}, err
	}
	return Subjects{root: root}, nil
}

// Root returns the scheme's root, such as "weft".
func (s Subjects) Root() string { return s.root }

// Event returns the subject of an event of type typ in stream, such as
// "weft.evt.session.42.tool.returned".
func (s Subjects) Event(stream, typ string) (string, error) {
	var buf [128]byte
	b, err := s.AppendEvent(buf[:0], stream, typ)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendEvent appends the subject Event returns to dst (for a caller that
// asks about a subject without keeping it).
func (s Subjects) AppendEvent(dst []byte, stream, typ string) ([]byte, error) {
	cat, id, err := StreamTokens(stream)
	if err != nil {
		return dst, err
	}
	if err := checkDotted("event type", typ); err != nil {
		return dst, err
	}
	dst = append(dst, s.root...)
	dst = append(dst, ".evt."...)
	dst = append(dst, cat...)
	dst = append(dst, '.')
	dst = append(dst, id...)
	dst = append(dst, '.')
	return append(dst, typ...), nil
}

// StreamEvents returns the filter matching every event of stream, such as
// "weft.evt.session.42.>".
func (s Subjects) StreamEvents(stream string) (string, error) {
	cat, id, err := StreamTokens(stream)
	if err != nil {
		return "", err
	}
	return s.root + ".evt." + cat + "." + id + ".>", nil
}

// AllEvents returns the filter matching every event: "weft.evt.>".
func (s Subjects) AllEvents() string { return s.root + ".evt.>" }

// Delta returns the subject of stream's live model output (the text and
// tool-call argument deltas of a streaming model, published while the
// model writes and never stored), such as "weft.delta.session.42".
func (s Subjects) Delta(stream string) (string, error) {
	cat, id, err := StreamTokens(stream)
	if err != nil {
		return "", err
	}
	return s.root + ".delta." + cat + "." + id, nil
}

// AllDeltas returns the filter matching every stream's live model output:
// "weft.delta.>".
func (s Subjects) AllDeltas() string { return s.root + ".delta.>" }

// LogIngest returns the subject the JetStream store publishes a whole
// event of type typ in stream on to store it, such as
// "weft.log.session.42.tool.returned". The log's stream takes
// AllLogIngest and stores each message under its Event subject (a subject
// transform), so the stored event reads back on Event's subject while a
// core subscriber to the event subjects receives only the live copies the
// runtime publishes there, with their private surfaces redacted.
func (s Subjects) LogIngest(stream, typ string) (string, error) {
	subject, err := s.Event(stream, typ)
	if err != nil {
		return "", err
	}
	return s.root + ".log." + strings.TrimPrefix(subject, s.root+".evt."), nil
}

// AllLogIngest returns the filter matching every LogIngest subject:
// "weft.log.>". Only the nodes may publish on it.
func (s Subjects) AllLogIngest() string { return s.root + ".log.>" }

// EventsOfType returns the filter matching events of type typ in every
// stream of category, such as "weft.evt.session.*.tool.returned".
func (s Subjects) EventsOfType(category, typ string) (string, error) {
	if category != OtherCategory && !isCategory(category) {
		return "", &TokenError{What: "category", Value: category, Reason: "not a lowercase word"}
	}
	if err := checkDotted("event type", typ); err != nil {
		return "", err
	}
	return s.root + ".evt." + category + ".*." + typ, nil
}

// ParseEvent splits an event subject into its stream name and event type.
func (s Subjects) ParseEvent(subject string) (stream, typ string, err error) {
	prefix := s.root + ".evt."
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", &TokenError{What: "event subject", Value: subject, Reason: "does not start with " + prefix}
	}
	parts := strings.SplitN(rest, ".", 3)
	if len(parts) != 3 {
		return "", "", &TokenError{What: "event subject", Value: subject, Reason: "want <category>.<id>.<type>"}
	}
	if err := checkDotted("event type", parts[2]); err != nil {
		return "", "", err
	}
	stream, err = StreamName(parts[0], parts[1])
	if err != nil {
		return "", "", err
	}
	return stream, parts[2], nil
}

// Command returns the subject of a command to a session actor, such as
// "weft.cmd.session.42.start". verb is a lowercase word.
func (s Subjects) Command(sessionID, verb string) (string, error) {
	id, err := EscapeToken(sessionID)
	if err != nil {
		return "", err
	}
	if !isWord(verb) {
		return "", &TokenError{What: "verb", Value: verb, Reason: "not a lowercase word [a-z][a-z0-9_-]*"}
	}
	return s.root + ".cmd.session." + id + "." + verb, nil
}

// SessionCommands returns the filter matching every command to a session:
// "weft.cmd.session.<id>.*".
func (s Subjects) SessionCommands(sessionID string) (string, error) {
	id, err := EscapeToken(sessionID)
	if err != nil {
		return "", err
	}
	return s.root + ".cmd.session." + id + ".*", nil
}

// AllCommands returns the filter matching every command to every session:
// "weft.cmd.session.*.*". A host that serves all the sessions it is asked
// about subscribes to it and splits subjects with ParseCommand.
func (s Subjects) AllCommands() string { return s.root + ".cmd.session.*.*" }

// ParseCommand splits a command subject into its (unescaped) session id and
// verb; it is the inverse of Command.
func (s Subjects) ParseCommand(subject string) (sessionID, verb string, err error) {
	prefix := s.root + ".cmd.session."
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", &TokenError{What: "command subject", Value: subject, Reason: "does not start with " + prefix}
	}
	tok, verb, ok := strings.Cut(rest, ".")
	if !ok || !isWord(verb) {
		return "", "", &TokenError{What: "command subject", Value: subject, Reason: "want <id>.<verb>"}
	}
	id, err := UnescapeToken(tok)
	if err != nil {
		return "", "", err
	}
	return id, verb, nil
}

// ReplySubject returns reply subject n under inbox (a NATS inbox, such as
// nats.Conn.NewInbox returns): "<inbox>.<n>". One subscription to
// ReplyFilter(inbox) receives the replies to many requests.
func ReplySubject(inbox string, n uint64) string { return inbox + "." + strconv.FormatUint(n, 10) }

// ReplyFilter returns the filter matching every ReplySubject under inbox:
// "<inbox>.*".
func ReplyFilter(inbox string) string { return inbox + ".*" }
