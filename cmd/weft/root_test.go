package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Help, asked for in any of its spellings, is output and exits 0; a
// mistake exits 2 with the usage.
func TestHelpAndExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
	}{
		{"--help", []string{"--help"}, 0, "usage: weft <command>"},
		{"-h", []string{"-h"}, 0, "usage: weft <command>"},
		{"help", []string{"help"}, 0, "global flags"},
		{"help CMD", []string{"help", "sessions"}, 0, "usage: weft sessions"},
		{"help audit verify", []string{"help", "audit", "verify"}, 0, "usage: weft audit verify"},
		{"CMD --help", []string{"sessions", "--help"}, 0, "usage: weft sessions"},
		{"CMD -help", []string{"approve", "-help"}, 0, "usage: weft approve"},
		{"help version", []string{"help", "version"}, 0, "usage: weft version"},
		{"help help", []string{"help", "help"}, 0, "usage: weft <command>"},
		{"help completion", []string{"help", "completion"}, 0, "autocompletion script"},
		{"help completion bash", []string{"help", "completion", "bash"}, 0, "bash"},
		{"completion --help", []string{"completion", "--help"}, 0, "autocompletion script"},
		{"help of an unknown command", []string{"help", "launch"}, 2, ""},
		{"unknown command", []string{"launch"}, 2, ""},
		{"no command", nil, 2, ""},
		{"bad -o", []string{"sessions", "-o", "yaml"}, 2, ""},
		{"--json against -o jsonl", []string{"sessions", "--json", "-o", "jsonl"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			if code := exitCode(err, io.Discard); code != tt.code {
				t.Fatalf("exit %d (err %v), want %d\nstderr:\n%s", code, err, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			if tt.code == 2 && !strings.Contains(stderr.String(), "usage: weft") {
				t.Errorf("a mistake without the usage on stderr:\n%s", stderr.String())
			}
		})
	}
}

// weft --help describes each global flag once, with its environment
// variable; a command's help names the global flags it takes without
// describing them again.
func TestGlobalFlagsListedOnce(t *testing.T) {
	var root, cmd bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, &root, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"--nats URL", "--url URL", "--data DIR", "-o, --output FORMAT", "--json", "--timeout", "NATS_URL", "WEFT_URL", "WEFT_TOKEN"} {
		if n := strings.Count(root.String(), f); n == 0 {
			t.Errorf("weft --help lacks %q:\n%s", f, root.String())
		}
	}
	if strings.Contains(root.String(), "--token") {
		t.Error("the token is a flag: it would show in ps and shell history")
	}
	_ = run(t.Context(), []string{"show", "--help"}, &cmd, io.Discard)
	if strings.Contains(cmd.String(), "      --nats URL") || !strings.Contains(cmd.String(), "global flags (weft --help describes them): --nats") {
		t.Errorf("weft show --help describes the global flags again, or does not name them:\n%s", cmd.String())
	}
}

func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"version"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "weft ") || !strings.Contains(stdout.String(), "go1.") {
		t.Errorf("version: %q", stdout.String())
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"version", "-o", "json"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	var rep versionReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Go == "" || rep.Version == "" {
		t.Errorf("version -o json: %q (%v)", stdout.String(), err)
	}
}

// Each shell gets a completion script, and completion offers a command's
// own flags (the commands parse their flags themselves).
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var stdout bytes.Buffer
		if err := run(t.Context(), []string{"completion", shell}, &stdout, io.Discard); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(stdout.String(), "weft") {
			t.Errorf("completion %s: no script:\n%.300s", shell, stdout.String())
		}
	}
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"__complete", "approve", "--"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"--reason", "--nats", "--creds-dir"} {
		if f == "--reason" {
			f = "--by" // approve's own flag
		}
		if !strings.Contains(stdout.String(), f+"\t") {
			t.Errorf("completion of approve's flags lacks %s:\n%s", f, stdout.String())
		}
	}
}

// The single-dash long flags of Go's flag package (-approve, -deny R,
// -json) still parse; shorthands, flag values and what follows -- do not
// change.
func TestNormaliseArgs(t *testing.T) {
	fs := newFlagSet("t", "", "", io.Discard)
	fs.Bool("approve", false, "")
	fs.String("deny", "", "")
	fs.StringP("output", "o", "", "")
	tests := []struct {
		in, want []string
	}{
		{[]string{"-approve"}, []string{"--approve"}},
		{[]string{"-deny", "-approve"}, []string{"--deny", "-approve"}}, // a value stays
		{[]string{"-deny=-x", "-approve=false"}, []string{"--deny=-x", "--approve=false"}},
		{[]string{"-o", "json", "-ojson"}, []string{"-o", "json", "-ojson"}},
		{[]string{"-verbose"}, []string{"-verbose"}}, // unknown: pflag refuses it
		{[]string{"--", "-approve"}, []string{"--", "-approve"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, normaliseArgs(fs, tt.in)); d != "" {
			t.Errorf("normaliseArgs(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

// -o jsonl writes a list one item per line; json an indented array.
func TestOutputFormats(t *testing.T) {
	rows := []map[string]int{{"a": 1}, {"a": 2}}
	for _, tt := range []struct{ format, want string }{
		{outJSONL, "{\"a\":1}\n{\"a\":2}\n"},
		{outJSON, "[\n  {\n    \"a\": 1\n  },\n  {\n    \"a\": 2\n  }\n]\n"},
	} {
		var b bytes.Buffer
		o := &outputFlag{format: tt.format}
		if err := o.write(&b, rows); err != nil || b.String() != tt.want {
			t.Errorf("-o %s: %q (%v), want %q", tt.format, b.String(), err, tt.want)
		}
	}
	if err := run(t.Context(), []string{"sessions", "-o", "yaml"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("-o yaml: %v, want a usage error", err)
	}
}
