package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const runTestToken = "tok-operator-0123456789abcdef"

// hostNode serves the demo (its run left waiting for approval) and a
// greeter agent whose OpenAI-compatible model streams "Hello from the
// spec." in pieces, with the HTTP API behind a token; the commands find
// the node's credentials and token in the environment.
func hostNode(t *testing.T) serveReport {
	t.Helper()
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Hello ", "from ", "the ", "spec."} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(model.Close)
	dir := t.TempDir()
	spec := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(spec, []byte("version: 1\nagents:\n  - name: greeter\n    model:\n      name: openai-compatible:m\n      base_url: "+model.URL+"/v1\n    instructions: [Greet.]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := writeTokens(t, dir, "alice viewer,operator,approver "+runTestToken)
	stdout, done, _ := serveInBackground(t, "serve", "--demo", "--agents", spec, "--listen", "127.0.0.1:-1", "--json", "--http", "127.0.0.1:0", "--http-tokens", tokens)
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	rep := decodeJSON[serveReport](t, first)
	t.Setenv(credsDirEnv, rep.CredsDir)
	t.Setenv(apiTokenEnv, runTestToken)
	t.Setenv(apiURLEnv, "")
	return rep
}

// weft run streams the answer over the API and over NATS, reports the
// result with stable field names, starts one run for one idempotency key,
// and never shows the token.
func TestRunCancelSessionsTail(t *testing.T) {
	rep := hostNode(t)
	for _, via := range [][]string{{"--url", rep.HTTP}, {"--nats", rep.URL}} {
		t.Run("run "+via[0], func(t *testing.T) {
			out, errOut, err := cli(t, append([]string{"run", "greeter", "hi"}, via...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if out != "Hello from the spec.\n" || !strings.Contains(errOut, "completed") {
				t.Errorf("stdout %q, stderr %q", out, errOut)
			}
		})
	}
	t.Run("run -o json and the idempotency key", func(t *testing.T) {
		var ids []string
		for range 2 {
			out, errOut, err := cli(t, "run", "greeter", "hi", "--url", rep.HTTP, "-o", "json", "--idempotency-key", "k-1")
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			var res runResult
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != "completed" || string(res.Output) != `"Hello from the spec."` {
				t.Fatalf("%q (%v)", out, err)
			}
			ids = append(ids, res.SessionID+"/"+res.RunID)
		}
		if ids[0] != ids[1] {
			t.Errorf("two runs for one key: %v", ids)
		}
	})
	t.Run("run --nats twice with one idempotency key", func(t *testing.T) {
		// The retry starts nothing; it reads the settled run from the log.
		var outs []string
		for range 2 {
			out, errOut, err := cli(t, "run", "greeter", "hi", "--nats", rep.URL, "-o", "json", "--idempotency-key", "k-nats", "--timeout", "30s")
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			outs = append(outs, out)
		}
		if outs[0] != outs[1] || !strings.Contains(outs[0], `"status": "completed"`) {
			t.Errorf("two starts with one key: %s / %s", outs[0], outs[1])
		}
	})
	t.Run("run with a key streams the deltas too", func(t *testing.T) {
		out, errOut, err := cli(t, "run", "greeter", "hi", "--url", rep.HTTP, "-o", "jsonl", "--idempotency-key", "k-deltas")
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if n := strings.Count(out, `"type":"model.delta"`); n != 4 || !strings.Contains(out, `"status":"completed"`) {
			t.Errorf("%d deltas, want 4 (the stream opened before the start):\n%s", n, out)
		}
	})
	t.Run("run --no-wait", func(t *testing.T) {
		out, _, err := cli(t, "run", "greeter", "hi", "--url", rep.HTTP, "--no-wait")
		if err != nil || !strings.HasPrefix(out, "started run ") {
			t.Errorf("%q, %v", out, err)
		}
	})
	t.Run("a wrong token is refused and not shown", func(t *testing.T) {
		t.Setenv(apiTokenEnv, "wrong-token-0123456789-secret")
		_, errOut, err := cli(t, "run", "greeter", "hi", "--url", rep.HTTP)
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err %v, want a 401", err)
		}
		if strings.Contains(err.Error()+errOut, "wrong-token") {
			t.Errorf("the token is shown: %v %s", err, errOut)
		}
	})
	demo := rep.Demo.SessionID
	t.Run("sessions --status waiting", func(t *testing.T) {
		out, _, err := cli(t, "sessions", "--nats", rep.URL, "--status", "waiting", "-o", "jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"session_id":"`+demo+`"`) {
			t.Errorf("waiting sessions: %q, want the demo's only", out)
		}
		out, _, _ = cli(t, "sessions", "--nats", rep.URL, "--agent", "greeter", "-o", "jsonl")
		if n := strings.Count(out, "\n"); n != 6 {
			t.Errorf("%d greeter sessions, want 6:\n%s", n, out)
		}
	})
	t.Run("tail --since and --last", func(t *testing.T) {
		out, _, err := cli(t, "tail", "weft.evt.session."+demo+".>", "--nats", rep.URL, "--since", "0", "--count", "2", "-o", "jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[0], `"version":1`) || !strings.Contains(lines[1], `"version":2`) {
			t.Errorf("tail --since 0 --count 2: %q", out)
		}
		out, _, err = cli(t, "tail", "weft.evt.session."+demo+".>", "--nats", rep.URL, "--last", "1", "--count", "1")
		if err != nil || !strings.Contains(out, "run.waiting") {
			t.Errorf("tail --last 1: %q, %v", out, err)
		}
		// --timeout ends a tail with nothing to print.
		out, _, err = cli(t, "tail", "weft.evt.session.none.>", "--nats", rep.URL, "--timeout", "2s")
		if err != nil || out != "" {
			t.Errorf("tail --timeout: %q, %v", out, err)
		}
	})
	t.Run("cancel by a prefix", func(t *testing.T) {
		out, errOut, err := cli(t, "cancel", demo[:len(demo)-4], "--url", rep.HTTP, "--reason", "not today")
		if err != nil || !strings.Contains(out, "cancelled run "+rep.Demo.RunID+" of session "+demo) {
			t.Fatalf("%q %q %v", out, errOut, err)
		}
		out, _, _ = cli(t, "sessions", "--nats", rep.URL, "--status", "cancelled", "-o", "jsonl")
		if !strings.Contains(out, demo) {
			t.Errorf("the demo session is not cancelled: %q", out)
		}
	})
}
