package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// A listener other machines can reach is refused without TLS, with an
// error naming the flag that accepts the risk; no server starts.
func TestServeRefusesInsecureListen(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:-1"},
		{"serve", "--listen", "192.0.2.1:4222", "--demo"},
		{"demo", "-serve", "-listen", ":-1"},
	} {
		_, _, err := cli(t, args...)
		if !errors.Is(err, bus.ErrInsecureListen) || !strings.Contains(err.Error(), "--insecure-listen") {
			t.Errorf("%q: %v, want ErrInsecureListen naming --insecure-listen", args, err)
		}
	}
}

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
			if rep.CredsDir != filepath.Join(rep.DataDir, "credentials") {
				t.Fatalf("credentials_dir %q, want DATA/credentials", rep.CredsDir)
			}
			// Without credentials the node admits nobody; a reader may
			// not approve; the approver role (the default) may.
			if _, _, err := cli(t, "approvals", "--nats", rep.URL); err == nil || !strings.Contains(err.Error(), "--creds-dir") {
				t.Fatalf("approvals without credentials: %v, want a refusal that names --creds-dir", err)
			}
			if _, _, err := cli(t, "approve", "call_deploy", "--session", rep.Demo.SessionID, "--nats", rep.URL, "--creds-dir", rep.CredsDir, "--role", "reader", "--timeout", "2s"); err == nil || !strings.Contains(err.Error(), "Permissions Violation") {
				t.Fatalf("approve as a reader: %v, want a permissions violation", err)
			}
			out := mustCLI(t, "approve", "call_deploy", "--nats", rep.URL, "--creds-dir", rep.CredsDir)
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
	creds := filepath.Join(dir, "credentials")
	wantContains(t, "serve", out, "data in "+dir, "listening: nats://127.0.0.1:", "credentials: "+creds, "agents:    support", "approval call_deploy: deploy", "next, in a second terminal:", "weft approve call_deploy --by alice --nats nats://127.0.0.1:", "--creds-dir "+creds)
	for _, r := range bus.Roles() {
		st, err := os.Stat(filepath.Join(creds, string(r)+".nk"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("the %s seed: %v, %v; want mode 0600", r, st, err)
		}
	}
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
	if rep.CredsDir != creds {
		t.Errorf("after a restart the credentials are in %q, want %q", rep.CredsDir, creds)
	}
	wantContains(t, "approve after a restart", mustCLI(t, "approve", "call_deploy", "--nats", rep.URL, "--creds-dir", creds), "completed: Ticket T-7 is fixed")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var rows []sessionRow
	if err := json.Unmarshal([]byte(mustCLI(t, "sessions", "--data", dir, "--json")), &rows); err != nil || len(rows) != 1 || rows[0].LastStatus != "completed" {
		t.Errorf("sessions --data = %+v, %v", rows, err)
	}
}

// auth-config prints public keys only, and the same keys on a second run.
func TestAuthConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	block := mustCLI(t, "auth-config", "--creds-dir", dir)
	env := mustCLI(t, "auth-config", "--creds-dir", dir, "--env")
	for _, r := range bus.Roles() {
		seed, err := os.ReadFile(filepath.Join(dir, string(r)+".nk"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(block+env, strings.TrimSpace(string(seed))) {
			t.Fatalf("auth-config printed the %s seed", r)
		}
		if !strings.Contains(env, bus.NKeyEnv(r)+"=U") {
			t.Errorf("--env lacks %s:\n%s", bus.NKeyEnv(r), env)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		_, pub, _ := strings.Cut(line, "=")
		if !strings.Contains(block, `"`+pub+`"`) {
			t.Errorf("the block lacks the key of %s (a second run made new keys?)", line)
		}
	}
	if _, _, err := cli(t, "auth-config"); !errors.Is(err, errUsage) {
		t.Errorf("auth-config without --creds-dir: %v, want a usage error", err)
	}
}
