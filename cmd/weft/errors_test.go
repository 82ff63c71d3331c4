package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/projections"
)

// Bad input gets a clear error and a non-zero exit (errUsage: status 2),
// and changes nothing on the node.
func TestCommandErrors(t *testing.T) {
	n, _ := testNode(t)
	s1, _ := demoWaiting(t, n)
	s2, _ := demoWaiting(t, n)
	url := "--nats=" + n.url
	down := "--nats=" + closedPort(t)
	tests := []struct {
		name  string
		args  []string
		usage bool     // a command-line mistake
		is    error    // matched with errors.Is, when set
		msg   []string // fragments of the error message
	}{
		{name: "show an unknown session", args: []string{"show", "nope", url}, is: projections.ErrUnknownSession, msg: []string{`session "nope"`, "weft sessions lists them"}},
		{name: "audit an unknown session", args: []string{"audit", "nope", url, "--json"}, is: projections.ErrUnknownSession, msg: []string{`session "nope"`}},
		{name: "show without a session", args: []string{"show", url}, usage: true, msg: []string{"needs exactly one SESSION"}},
		{name: "audit two sessions", args: []string{"audit", "a", "b", url}, usage: true, msg: []string{"needs exactly one SESSION"}},
		{name: "audit verify an unknown session", args: []string{"audit", "verify", "nope", url, "--plain"}, is: projections.ErrUnknownSession, msg: []string{`session "nope"`}},
		{name: "audit verify without keys or a checkpoint", args: []string{"audit", "verify", url}, is: errNoAnchor, msg: []string{"--keys", "--checkpoint", "--plain"}},
		{name: "audit verify against a missing checkpoint", args: []string{"audit", "verify", url, "--plain", "--checkpoint", "/nonexistent/cp.json"}, is: errBadCheckpoint},
		{name: "audit checkpoint without --out", args: []string{"audit", "checkpoint", url}, usage: true, msg: []string{"needs --out"}},
		{name: "audit checkpoint without keys", args: []string{"audit", "checkpoint", url, "--out", "-"}, is: errNoKeys},
		{name: "audit rotate-key without a keyring", args: []string{"audit", "rotate-key"}, usage: true},
		{name: "audit verify with a bad flag", args: []string{"audit", "verify", "--all", url}, usage: true},
		{name: "sessions with an argument", args: []string{"sessions", "x", url}, usage: true},
		{name: "replay with an argument", args: []string{"replay", "x", url}, usage: true},
		{name: "unknown flag", args: []string{"approvals", "--all", url}, usage: true},
		{name: "data and nats", args: []string{"sessions", "--data", t.TempDir(), url}, usage: true, msg: []string{"exclude each other"}},
		{name: "data without a log", args: []string{"sessions", "--data", t.TempDir()}, is: errNoLog},
		{name: "zero timeout", args: []string{"sessions", "--timeout", "0s", url}, usage: true},
		{name: "sessions on an unreachable node", args: []string{"sessions", down}, msg: []string{"connect to nats://127.0.0.1:", "weft serve"}},
		{name: "approve on an unreachable node", args: []string{"approve", "call_deploy", down}, msg: []string{"connect to nats://127.0.0.1:"}},
		{name: "tail on an unreachable node", args: []string{"tail", "weft.evt.>", down}, msg: []string{"connect to nats://127.0.0.1:"}},

		{name: "approve without an id", args: []string{"approve", url}, usage: true, msg: []string{"needs the ID"}},
		{name: "approve an id twice", args: []string{"approve", "call_deploy", "call_deploy", url}, usage: true, msg: []string{"given twice"}},
		{name: "approve an unknown id", args: []string{"approve", "call_nope", url}, is: errNotPending, msg: []string{`"call_nope"`, "weft approvals"}},
		{name: "approve in an unknown session", args: []string{"approve", "call_deploy", "--session", "nope", url}, is: errNotPending, msg: []string{"in session nope"}},
		{name: "approve an id pending in two sessions", args: []string{"approve", "call_deploy", url}, is: errAmbiguous, msg: []string{s1.ID(), s2.ID(), "--session"}},
		{name: "bad --args JSON", args: []string{"approve", "call_deploy", "--session", s1.ID(), "--args", `{"release":`, url}, usage: true, msg: []string{"--args must be a JSON object"}},
		{name: "--args not an object", args: []string{"approve", "call_deploy", "--session", s1.ID(), "--args", `["v1"]`, url}, usage: true, msg: []string{"--args must be a JSON object", "not an object"}},
		{name: "empty --args", args: []string{"approve", "call_deploy", "--args", "", url}, usage: true, msg: []string{"empty"}},
		{name: "empty --by", args: []string{"approve", "call_deploy", "--by", "", url}, usage: true},
		{name: "deny without a reason", args: []string{"deny", "call_deploy", url}, usage: true, msg: []string{"needs --reason"}},
		{name: "fail without a reason", args: []string{"fail", "call_deploy", url}, usage: true, msg: []string{"needs --reason"}},
		{name: "complete without a result", args: []string{"complete", "call_deploy", url}, usage: true, msg: []string{"needs --result"}},
		{name: "bad --details JSON", args: []string{"fail", "call_deploy", "--reason", "exit 2", "--details", "{code:2}", url}, usage: true, msg: []string{"--details must be JSON"}},
		{name: "empty --details", args: []string{"fail", "call_deploy", "--reason", "exit 2", "--details", "", url}, usage: true, msg: []string{"--details must be JSON", "empty"}},
		{name: "the node refuses a fail with details of an approval", args: []string{"fail", "call_deploy", "--session", s2.ID(), "--reason", "no", "--details", `{"code":2}`, url}, is: actors.ErrWrongDecision},
		{name: "bad --result JSON", args: []string{"complete", "call_deploy", "--result", "{done}", url}, usage: true, msg: []string{"--result must be JSON"}},
		{name: "the node refuses a complete of an approval", args: []string{"complete", "call_deploy", "--session", s1.ID(), "--result", `"done"`, url}, is: actors.ErrWrongDecision, msg: []string{"refused it (wrong_decision)"}},
		{name: "the node refuses a fail of an approval", args: []string{"fail", "call_deploy", "--session", s2.ID(), "--reason", "no", url}, is: actors.ErrWrongDecision},

		{name: "tail without a filter", args: []string{"tail", url}, usage: true},
		{name: "tail: empty filter", args: []string{"tail", "", url}, usage: true, is: errBadFilter, msg: []string{"empty"}},
		{name: "tail: '>' not last", args: []string{"tail", "weft.evt.>.tool", url}, usage: true, is: errBadFilter, msg: []string{"'>' must be the last token"}},
		{name: "tail: partial wildcard", args: []string{"tail", "weft.evt.session.*.tool.ret*", url}, usage: true, is: errBadFilter, msg: []string{"whole tokens"}},
		{name: "tail: empty token", args: []string{"tail", "weft.evt..tool.returned", url}, usage: true, is: errBadFilter, msg: []string{"empty token"}},
		{name: "tail: white space", args: []string{"tail", "weft.evt.session.a b.tool.returned", url}, usage: true, is: errBadFilter, msg: []string{"white space"}},
		{name: "tail: not an event subject", args: []string{"tail", "weft.cmd.>", url}, usage: true, is: errBadFilter, msg: []string{"matches no event", "weft.evt.session.*.tool.returned"}},
		{name: "tail: too short", args: []string{"tail", "weft.evt.session", url}, usage: true, is: errBadFilter, msg: []string{"too short"}},
		{name: "tail: negative count", args: []string{"tail", "weft.evt.>", "--count", "-1", url}, usage: true},

		{name: "serve with an argument", args: []string{"serve", "now"}, usage: true},
		{name: "serve with chain keys but no NATS", args: []string{"serve", "--chain-keys", "k.json"}, usage: true, msg: []string{"--chain-keys is for a node on an external NATS"}},
		{name: "serve on NATS with a data directory", args: []string{"serve", "--nats", "nats://127.0.0.1:4222", "--data", "d"}, usage: true, msg: []string{"--nats runs on an external NATS"}},
		{name: "serve without a listener", args: []string{"serve", "--listen", ""}, usage: true},
		{name: "serve on an unreachable NATS", args: []string{"serve", down}, msg: []string{"connect"}},
		{name: "demo -listen without -serve", args: []string{"demo", "-listen", "127.0.0.1:-1"}, usage: true},
		{name: "demo -serve with a decision", args: []string{"demo", "-serve", "-deny", "no"}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := cli(t, tt.args...)
			if err == nil {
				t.Fatalf("weft %q succeeded:\n%s", tt.args, out)
			}
			if got := errors.Is(err, errUsage); got != tt.usage {
				t.Errorf("usage error = %v, want %v: %v", got, tt.usage, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want one matching %v", err, tt.is)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
			// A bad filter says what is wrong without the usage.
			if tt.usage && !errors.Is(err, errBadFilter) && !strings.Contains(errOut, "usage: weft") {
				t.Errorf("stderr lacks the usage:\n%s", errOut)
			}
		})
	}
	// Nothing above decided anything.
	items := decodeJSON[[]projections.QueueItem](t, mustCLI(t, "approvals", url, "--json"))
	var sessions []string
	for _, it := range items {
		sessions = append(sessions, it.SessionID)
	}
	if d := cmp.Diff([]string{s1.ID(), s2.ID()}, sessions); d != "" {
		t.Errorf("pending sessions after the errors (-want +got):\n%s", d)
	}
}

// A resume decides every pending item of a run: the ids must name all of
// them, in one run.
func TestFindRun(t *testing.T) {
	item := func(session, run, call string, kind projections.PendingKind) projections.QueueItem {
		return projections.QueueItem{PendingItem: projections.PendingItem{Kind: kind, SessionID: session, RunID: run, ToolCallID: call, Tool: "t_" + call}}
	}
	items := []projections.QueueItem{
		item("s1", "r1", "a", projections.PendingApproval),
		item("s1", "r1", "b", projections.PendingDeferred),
		item("s2", "r2", "a", projections.PendingApproval),
		item("s3", "r3", "c", projections.PendingApproval),
	}
	tests := []struct {
		name             string
		ids              []string
		session          string
		wantSess, wantRn string
		is               error
		msg              []string
	}{
		{name: "one item of one run", ids: []string{"c"}, wantSess: "s3", wantRn: "r3"},
		{name: "every item of a run", ids: []string{"b", "a"}, session: "s1", wantSess: "s1", wantRn: "r1"},
		{name: "the session picks the run", ids: []string{"a"}, session: "s2", wantSess: "s2", wantRn: "r2"},
		{name: "some items of a run", ids: []string{"b"}, msg: []string{"run r1 of session s1 also waits for a (approval t_a)", "weft approve b a"}},
		{name: "ambiguous", ids: []string{"a"}, is: errAmbiguous, msg: []string{"s1 (run r1, t_a)", "s2 (run r2, t_a)"}},
		{name: "two runs", ids: []string{"c", "b"}, msg: []string{"different runs"}},
		{name: "unknown", ids: []string{"z"}, is: errNotPending},
		{name: "wrong session", ids: []string{"c"}, session: "s1", is: errNotPending, msg: []string{"in session s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, r, err := findRun(items, tt.ids, tt.session, actionApprove)
			if tt.wantSess != "" {
				if err != nil || s != tt.wantSess || r != tt.wantRn {
					t.Errorf("findRun = %q, %q, %v; want %q, %q", s, r, err, tt.wantSess, tt.wantRn)
				}
				return
			}
			if err == nil {
				t.Fatalf("findRun = %q, %q, want an error", s, r)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		pos  []string
		by   string
	}{
		{"flags first", []string{"--by", "x", "a", "b"}, []string{"a", "b"}, "x"},
		{"flags last", []string{"a", "b", "--by", "x"}, []string{"a", "b"}, "x"},
		{"flags between", []string{"a", "-by=x", "b"}, []string{"a", "b"}, "x"},
		{"double dash", []string{"a", "--", "--by", "x"}, []string{"a", "--by", "x"}, ""},
		{"none", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlagSet("t", "", "", &strings.Builder{})
			by := fs.String("by", "", "")
			pos, err := parseArgs(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.pos, pos); d != "" || *by != tt.by {
				t.Errorf("positional (-want +got):\n%s\nby = %q, want %q", d, *by, tt.by)
			}
		})
	}
}
