package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/weft-run/weft/bus"
)

// A NATS server configured with auth-config's accounts block, as an
// external cluster would be, serves a weft serve node (which runs the
// JetStream API guard) and the lesser roles' commands: a reader lists the
// approvals from the log (its consumers go through the node's guard) and
// an approver approves.
func TestServeOnAServerWithTheRoleAccounts(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	block := mustCLI(t, "auth-config", "--creds-dir", creds)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:-1\n"+block), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	opts.JetStream, opts.StoreDir, opts.NoSigs, opts.NoLog = true, t.TempDir(), true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(bus.DefaultReadyTimeout) {
		t.Fatal("nats-server did not start")
	}
	url := srv.ClientURL()
	stdout, done, stop := serveInBackground(t, "serve", "--demo", "--nats", url, "--nkey", bus.SeedFile(creds, bus.RoleNode), "--json")
	rep := decodeJSON[serveReport](t, strings.TrimSpace(stdout.waitFor(t, t.Context(), done, "\n")))
	if rep.Demo == nil || len(rep.Demo.Pending) != 1 {
		t.Fatalf("serve report = %+v", rep)
	}
	wantContains(t, "approvals as reader", mustCLI(t, "approvals", "--nats", url, "--creds-dir", creds, "--role", "reader", "--timeout", "10s"), "call_deploy")
	wantContains(t, "approve", mustCLI(t, "approve", "call_deploy", "--nats", url, "--creds-dir", creds), "completed: Ticket T-7 is fixed")
	if err := stop(); err != nil {
		t.Fatalf("serve stopped with %v", err)
	}
}
