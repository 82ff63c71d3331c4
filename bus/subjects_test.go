package bus_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/weft-run/weft/bus"
)

func TestEscapeToken(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "abc-123_XYZ", "abc-123_XYZ"},
		{"dot", "a.b", "a%2Eb"},
		{"star", "*", "%2A"},
		{"greater", "a>", "a%3E"},
		{"space", "a b", "a%20b"},
		{"tab and newline", "\t\n", "%09%0A"},
		{"nul", "\x00", "%00"},
		{"delete", "\x7f", "%7F"},
		{"escape char", "100%", "100%25"},
		{"utf-8", "é", "%C3%A9"},
		{"invalid utf-8", "\xff", "%FF"},
		{"dollar and slash", "$sys/x", "$sys/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bus.EscapeToken(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("EscapeToken(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			back, err := bus.UnescapeToken(got)
			if err != nil || back != tc.in {
				t.Fatalf("UnescapeToken(%q) = %q, %v; want %q", got, back, err, tc.in)
			}
		})
	}
}

func TestEscapeTokenEmpty(t *testing.T) {
	_, err := bus.EscapeToken("")
	var te *bus.TokenError
	if !errors.Is(err, bus.ErrInvalidToken) || !errors.As(err, &te) {
		t.Fatalf("EscapeToken(\"\") err = %v, want a *TokenError matching ErrInvalidToken", err)
	}
}

func TestUnescapeTokenRejects(t *testing.T) {
	for _, tok := range []string{"", "a.b", "*", ">", "a b", "%", "%2", "%zz", "%2e", "%41", "a\x00"} {
		t.Run(tok, func(t *testing.T) {
			if got, err := bus.UnescapeToken(tok); !errors.Is(err, bus.ErrInvalidToken) {
				t.Fatalf("UnescapeToken(%q) = %q, %v; want ErrInvalidToken", tok, got, err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	tests := []struct {
		name string
		got  func() (string, error)
		want string
	}{
		{"session event", func() (string, error) { return bus.Default.Event("session-42", "tool.returned") }, "weft.evt.session.42.tool.returned"},
		{"escaped session id", func() (string, error) { return bus.Default.Event("session-a.b", "run.started") }, "weft.evt.session.a%2Eb.run.started"},
		{"other stream", func() (string, error) { return bus.Default.Event("audit", "run.started") }, "weft.evt._.audit.run.started"},
		{"log ingest", func() (string, error) { return bus.Default.LogIngest("session-a.b", "tool.returned") }, "weft.log.session.a%2Eb.tool.returned"},
		{"all log ingest", func() (string, error) { return bus.Default.AllLogIngest(), nil }, "weft.log.>"},
		{"capitalised category", func() (string, error) { return bus.Default.Event("Session-1", "run.started") }, "weft.evt._.Session-1.run.started"},
		{"empty id after dash", func() (string, error) { return bus.Default.Event("session-", "run.started") }, "weft.evt._.session-.run.started"},
		{"stream filter", func() (string, error) { return bus.Default.StreamEvents("session-42") }, "weft.evt.session.42.>"},
		{"type filter", func() (string, error) { return bus.Default.EventsOfType("session", "tool.returned") }, "weft.evt.session.*.tool.returned"},
		{"all events", func() (string, error) { return bus.Default.AllEvents(), nil }, "weft.evt.>"},
		{"command", func() (string, error) { return bus.Default.Command("42", "start") }, "weft.cmd.session.42.start"},
		{"escaped command", func() (string, error) { return bus.Default.Command("a b", "cancel") }, "weft.cmd.session.a%20b.cancel"},
		{"session commands", func() (string, error) { return bus.Default.SessionCommands("42") }, "weft.cmd.session.42.*"},
		{"all commands", func() (string, error) { return bus.Default.AllCommands(), nil }, "weft.cmd.session.*.*"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.got()
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if !strings.HasSuffix(got, ">") && !strings.Contains(got, "*") && !server.IsValidPublishSubject(got) {
				t.Fatalf("%q is not a valid NATS publish subject", got)
			}
		})
	}
}

func TestSubjectsReject(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
	}{
		{"empty stream", func() error { _, err := bus.Default.Event("", "run.started"); return err }},
		{"empty type", func() error { _, err := bus.Default.Event("session-1", ""); return err }},
		{"wildcard type", func() error { _, err := bus.Default.Event("session-1", "tool.*"); return err }},
		{"upper-case type", func() error { _, err := bus.Default.Event("session-1", "Run.Started"); return err }},
		{"type with empty part", func() error { _, err := bus.Default.Event("session-1", "run..started"); return err }},
		{"empty session id", func() error { _, err := bus.Default.Command("", "start"); return err }},
		{"verb with dot", func() error { _, err := bus.Default.Command("1", "a.b"); return err }},
		{"bad category", func() error { _, err := bus.Default.EventsOfType("a-b", "run.started"); return err }},
		{"bad root", func() error { _, err := bus.NewSubjects("weft.>"); return err }},
		{"foreign subject", func() error { _, _, err := bus.Default.ParseEvent("other.evt.session.1.run.started"); return err }},
		{"short subject", func() error { _, _, err := bus.Default.ParseEvent("weft.evt.session.1"); return err }},
		{"non-canonical id", func() error { _, _, err := bus.Default.ParseEvent("weft.evt.session.%41.run.started"); return err }},
		{"foreign command", func() error { _, _, err := bus.Default.ParseCommand("other.cmd.session.1.start"); return err }},
		{"command without verb", func() error { _, _, err := bus.Default.ParseCommand("weft.cmd.session.1"); return err }},
		{"command with bad id", func() error { _, _, err := bus.Default.ParseCommand("weft.cmd.session.%41.start"); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); !errors.Is(err, bus.ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
		})
	}
}

func TestParseEventRoundTrip(t *testing.T) {
	sub, err := bus.NewSubjects("test1.weft")
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []string{"session-42", "session-a.b*>%", "audit", "Session-1", "session-", "run-x-y", "-x", "é"} {
		t.Run(stream, func(t *testing.T) {
			subj, err := sub.Event(stream, "tool_search.no_match")
			if err != nil {
				t.Fatal(err)
			}
			gotStream, gotType, err := sub.ParseEvent(subj)
			if err != nil || gotStream != stream || gotType != "tool_search.no_match" {
				t.Fatalf("ParseEvent(%q) = %q, %q, %v", subj, gotStream, gotType, err)
			}
		})
	}
}

func TestParseCommandRoundTrip(t *testing.T) {
	sub, err := bus.NewSubjects("test1.weft")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"42", "a.b*>%", "a b", "é"} {
		t.Run(id, func(t *testing.T) {
			subj, err := sub.Command(id, "resume")
			if err != nil {
				t.Fatal(err)
			}
			if !server.SubjectMatchesFilter(subj, sub.AllCommands()) {
				t.Errorf("%q does not match %q", subj, sub.AllCommands())
			}
			gotID, verb, err := sub.ParseCommand(subj)
			if err != nil || gotID != id || verb != "resume" {
				t.Fatalf("ParseCommand(%q) = %q, %q, %v", subj, gotID, verb, err)
			}
		})
	}
	if r := bus.ReplySubject("_INBOX.abc", 7); r != "_INBOX.abc.7" || !server.SubjectMatchesFilter(r, bus.ReplyFilter("_INBOX.abc")) {
		t.Errorf("reply subject %q does not match %q", r, bus.ReplyFilter("_INBOX.abc"))
	}
}

// FuzzEscapeToken checks that every non-empty string escapes to one valid
// subject token that unescapes to the same string, and that every token
// UnescapeToken accepts escapes back to itself (one token per id).
func FuzzEscapeToken(f *testing.F) {
	for _, s := range []string{"a", "a.b", "*", ">", " ", "%", "%41", "%2E", "é", "\x00\xff", "session-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := bus.EscapeToken(s)
		if s == "" {
			if !errors.Is(err, bus.ErrInvalidToken) {
				t.Fatalf("EscapeToken(\"\") err = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("EscapeToken(%q): %v", s, err)
		}
		if !bus.ValidToken(tok) || !server.IsValidPublishSubject("weft."+tok+".x") || strings.ContainsAny(tok, ".*> \t\r\n") {
			t.Fatalf("EscapeToken(%q) = %q is not a valid token", s, tok)
		}
		back, err := bus.UnescapeToken(tok)
		if err != nil || back != s {
			t.Fatalf("UnescapeToken(EscapeToken(%q)) = %q, %v", s, back, err)
		}
		// The other direction: a string accepted as a token is canonical.
		if raw, err := bus.UnescapeToken(s); err == nil {
			again, err := bus.EscapeToken(raw)
			if err != nil || again != s {
				t.Fatalf("EscapeToken(UnescapeToken(%q)) = %q, %v", s, again, err)
			}
		}
	})
}
