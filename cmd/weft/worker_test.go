package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/toolsets"
)

// TestWorker runs the demo agent on a node whose tools are served by
// weft worker, from the queue group and from a worker pool: the parallel
// calls, the approval and the deploy all run on the worker; cancelling the
// worker's context stops it cleanly.
func TestWorker(t *testing.T) {
	for _, mode := range []struct {
		name string
		args []string
		via  string
	}{
		{"queue group", nil, "(queue group weft-workers)"},
		{"pool", []string{"--pool", "demo", "--queue-replicas", "1"}, "(pool demo)"},
	} {
		t.Run(mode.name, func(t *testing.T) { testWorker(t, mode.args, mode.via) })
	}
}

func testWorker(t *testing.T, args []string, via string) {
	n, _ := testNode(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	done := make(chan struct{})
	var werr error
	go func() {
		defer close(done)
		werr = run(wctx, append([]string{"worker", "--nats", n.url, "--id", "w1", "--concurrency", "2"}, args...), stdout, stderr)
	}()
	stdout.waitFor(t, ctx, done, "worker w1 serving lookup, fetch_ticket, deploy on "+n.url+" "+via)

	remote, err := n.rt.RemoteTools(ctx, "lookup", "fetch_ticket", "deploy")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := demoAgentConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools, cfg.Toolsets = nil, []toolsets.Toolset{remote}
	a, err := n.rt.NewAgent("remote_support", cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	res, err := s.Run(ctx, demoPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("status %s, pending %+v; want waiting for the deploy", res.Status, res.Pending)
	}
	res, err = s.Resume(ctx, weft.Approve(res.Pending.Approvals[0].ID, "test", nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted || !strings.Contains(res.Output, "v1.4.2") {
		t.Fatalf("status %s, output %q; want completed with the deploy of v1.4.2", res.Status, res.Output)
	}
	stop()
	<-done
	if werr != nil {
		t.Fatalf("worker: %v\n%s", werr, stderr.String())
	}
	wantContains(t, "stdout", stdout.String(), "worker stopped")
}

func TestWorkerUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"unknown tool set", []string{"worker", "--tools", "nope"}},
		{"argument", []string{"worker", "extra"}},
		{"unknown flag", []string{"worker", "--bogus"}},
		{"negative concurrency", []string{"worker", "--concurrency", "-1"}},
		{"bad pool", []string{"worker", "--pool", "a.b"}},
		{"replicas without a pool", []string{"worker", "--queue-replicas", "3"}},
		{"too many replicas", []string{"worker", "--pool", "p", "--queue-replicas", "7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, tc.args...)
			if !errors.Is(err, errUsage) {
				t.Errorf("error %v, want a usage error", err)
			}
		})
	}
}

// TestWorkerAuthenticates: weft worker reaches a NATS that requires a user
// and password with --user and $WEFT_NATS_PASSWORD, and is refused with a
// wrong password.
func TestWorkerAuthenticates(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Username: "alice", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	t.Setenv(passwordEnv, "wrong")
	_, _, err = cli(t, "worker", "--nats", srv.ClientURL(), "--user", "alice")
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(strings.ToLower(err.Error()), "author") {
		t.Errorf("worker with a wrong password: err = %v, want an authorization error", err)
	}

	t.Setenv(passwordEnv, "s3cret")
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	done := make(chan struct{})
	var werr error
	go func() {
		defer close(done)
		werr = run(wctx, []string{"worker", "--nats", srv.ClientURL(), "--user", "alice", "--id", "w-auth"}, stdout, stderr)
	}()
	stdout.waitFor(t, ctx, done, "worker w-auth serving")
	stop()
	<-done
	if werr != nil {
		t.Fatalf("worker: %v\n%s", werr, stderr.String())
	}

	if _, _, err := cli(t, "worker", "--tls-cert", "c.pem"); !errors.Is(err, errUsage) {
		t.Errorf("worker --tls-cert without --tls-key: err = %v, want a usage error", err)
	}
}

// TestReadCommandsAuthenticate: the read commands reach a NATS that
// requires a user and password with --user and $WEFT_NATS_PASSWORD, are
// refused with a wrong one, and refuse auth flags with --data.
func TestReadCommandsAuthenticate(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", Username: "alice", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)

	t.Setenv(passwordEnv, "wrong")
	if _, _, err := cli(t, "sessions", "--nats", srv.ClientURL(), "--user", "alice"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "author") {
		t.Errorf("sessions with a wrong password: err = %v, want an authorization error", err)
	}
	t.Setenv(passwordEnv, "s3cret")
	mustCLI(t, "sessions", "--nats", srv.ClientURL(), "--user", "alice")
	if _, _, err := cli(t, "sessions", "--data", t.TempDir(), "--user", "alice"); !errors.Is(err, errUsage) {
		t.Errorf("sessions --data --user: err = %v, want a usage error", err)
	}
}
