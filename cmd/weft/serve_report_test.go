package main

import (
	"strings"
	"testing"
)

// A node restarted on a data directory counts the sessions it carried on
// and, apart, those waiting for a decision (which need no recovery).
func TestServeCountsWaitingSessions(t *testing.T) {
	dir := t.TempDir()
	stdout, done, stop := serveInBackground(t, "serve", "--demo", "--data", dir, "--listen", "127.0.0.1:-1")
	stdout.waitFor(t, t.Context(), done, "serving until interrupted")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	stdout, done, stop = serveInBackground(t, "serve", "--data", dir, "--listen", "127.0.0.1:-1")
	out := stdout.waitFor(t, t.Context(), done, "serving until interrupted")
	if !strings.Contains(out, "recovered: 0 running session(s) carried on, 1 waiting for a decision\n") {
		t.Errorf("the report:\n%s", out)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A node on an external NATS says it is connected there; it listens on
// nothing.
func TestServeReportOnExternalNATS(t *testing.T) {
	var b strings.Builder
	url := "nats://nats.example:4222"
	printServeReport(&b, serveOptions{node: nodeConfig{natsURL: url}}, &node{url: url}, serveReport{})
	if !strings.Contains(b.String(), "connected: "+url+"\n") || strings.Contains(b.String(), "listening:") {
		t.Errorf("the report:\n%s", b.String())
	}
}
