package main

import (
	"context"
	"fmt"
	"io"

	"github.com/weft-run/weft/bus"
)

func init() {
	commands["auth-config"] = command{"generate role credentials and print the nats-server authorization of weft's roles (for an external NATS)", runAuthConfig}
}

// runAuthConfig generates (on first use) one nkey seed per role in
// --creds-dir and prints the nats-server configuration that gives each the
// role's account and permissions: the accounts block, or with --env the public
// keys as the variables deploy/'s configurations read. It prints no seed.
func runAuthConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("auth-config", "--creds-dir DIR [--env]", `
Generates, on first use, one nkey user per role (node, operator, approver,
reader, worker) in DIR, each seed in DIR/ROLE.nk with mode 0600, and prints
the "accounts" block of a nats-server configuration that admits those
users with weft's role permissions, each lesser role in a NATS account of
its own that imports only what it uses from the node account WEFT (README,
"Security model"): the same accounts weft serve's embedded server has. Put
it in the configuration of every server of an external cluster, run the
nodes with weft serve --nats ... --nkey DIR/node.nk (each runs the JetStream
API guard the lesser accounts need), the workers with --nkey DIR/worker.nk,
and the other commands with --creds-dir DIR --role ROLE. With --env it prints the public keys as the
WEFT_NKEY_<ROLE> variables that deploy/'s configurations read instead. Only
public keys are printed.`, stderr)
	dir := fs.String("creds-dir", "", "keep the role seeds in `DIR` (created with mode 0700)")
	env := fs.Bool("env", false, "print WEFT_NKEY_<ROLE>=<public key> lines instead of the accounts block")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(fs, "takes no arguments, got %q", pos)
	case *dir == "":
		return usageError(fs, "--creds-dir DIR is required")
	}
	creds, err := bus.LoadOrCreateCredentials(*dir)
	if err != nil {
		return fmt.Errorf("auth-config: %w", err)
	}
	if *env {
		for _, r := range bus.Roles() {
			fmt.Fprintf(stdout, "%s=%s\n", bus.NKeyEnv(r), creds.PublicKey(r))
		}
		return nil
	}
	fmt.Fprint(stdout, bus.DefaultLayout().NATSAccounts(creds.PublicKey))
	return nil
}
