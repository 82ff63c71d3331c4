package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// serveInBackground runs args (a serving command) until the test stops it;
// stop cancels it and returns its error.
func serveInBackground(t *testing.T, args ...string) (stdout *syncBuffer, done <-chan struct{}, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	ch := make(chan struct{})
	var err error
	go func() {
		defer close(ch)
		err = run(ctx, args, stdout, stderr)
	}()
	stop = func() error {
		cancel()
		<-ch
		if err != nil {
			t.Logf("stderr:\n%s", stderr.String())
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stdout, ch, stop
}

// serve --demo and demo -serve leave the demo run waiting, print where the
// node listens, serve a decision from another weft command, report the run's
// end, and stop cleanly when their context ends (the CLI's SIGINT/SIGTERM).
func TestServeDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"serve --demo", []string{"serve", "--demo", "--listen", "127.0.0.1:-1", "--json"}},
		{"demo -serve", []string{"demo", "-serve", "-listen", "127.0.0.1:-1", "-json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, done, stop := serveInBackground(t, tt.args...)
			first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
			rep := decodeJSON[serveReport](t, first)
			if !strings.HasPrefix(rep.URL, "nats://127.0.0.1:") || rep.Demo == nil || len(rep.Demo.Pending) != 1 || rep.Demo.Pending[0].ID != "call_deploy" {
				t.Fatalf("serve report = %+v", rep)
			}
			out := mustCLI(t, "approve", "call_deploy", "--nats", rep.URL)
			wantContains(t, "approve", out, "session "+rep.Demo.SessionID, "completed: Ticket T-7 is fixed")
			// The node reports the run's end as its event (JSON mode).
			all := stdout.waitFor(t, t.Context(), done, `"type":"run.completed"`)
			last := strings.Split(strings.TrimSpace(all), "\n")
			ev, err := events.ParseEvent([]byte(last[len(last)-1]))
			if err != nil || ev.RunID != rep.Demo.RunID || ev.Type != events.TypeRunCompleted {
				t.Errorf("last line %q: %v", last[len(last)-1], err)
			}
			if err := stop(); err != nil {
				t.Fatalf("serve stopped with %v", err)
			}
			if _, err := os.Stat(rep.DataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary data directory %s is still there: %v", rep.DataDir, err)
			}
		})
	}
}

// serve keeps its data in --data, recovers on restart, and the stopped
// node's log is readable with --data.
func TestServeDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "node")
	stdout, done, stop := serveInBackground(t, "serve", "--data", dir, "--listen", "127.0.0.1:-1", "--demo")
	out := stdout.waitFor(t, t.Context(), done, "serving until interrupted")
	wantContains(t, "serve", out, "data in "+dir, "listening: nats://127.0.0.1:", "agents:    support", "approval call_deploy: deploy", "next, in a second terminal:", "weft approve call_deploy --by alice --nats nats://127.0.0.1:")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "serve", stdout.String(), "weft serve: stopping")

	// The waiting run is in the kept log; a restarted node serves its
	// approval (the session actor rebuilds from the log).
	wantContains(t, "approvals --data", mustCLI(t, "approvals", "--data", dir), "call_deploy")
	stdout, done, stop = serveInBackground(t, "serve", "--data", dir, "--listen", "127.0.0.1:-1", "--json")
	rep := decodeJSON[serveReport](t, strings.TrimSpace(stdout.waitFor(t, t.Context(), done, "\n")))
	if rep.Demo != nil || rep.DataDir != dir {
		t.Errorf("serve report = %+v", rep)
	}
	wantContains(t, "approve after a restart", mustCLI(t, "approve", "call_deploy", "--nats", rep.URL), "completed: Ticket T-7 is fixed")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var rows []sessionRow
	if err := json.Unmarshal([]byte(mustCLI(t, "sessions", "--data", dir, "--json")), &rows); err != nil || len(rows) != 1 || rows[0].LastStatus != "completed" {
		t.Errorf("sessions --data = %+v, %v", rows, err)
	}
}
