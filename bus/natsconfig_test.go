package bus_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/weft-run/weft/bus"
)

// The accounts block, loaded by nats-server's own configuration parser
// (with the keys inline or from the environment), puts each role in its
// account with exactly the permissions of the embedded server.
func TestNATSAccountsLoadAsTheRolePermissions(t *testing.T) {
	creds, err := bus.LoadOrCreateCredentials(filepath.Join(t.TempDir(), bus.CredentialsDir))
	if err != nil {
		t.Fatal(err)
	}
	l := bus.DefaultLayout()
	for _, r := range bus.Roles() {
		t.Setenv(bus.NKeyEnv(r), creds.PublicKey(r))
	}
	for name, key := range map[string]func(bus.Role) string{
		"inline":      creds.PublicKey,
		"environment": func(r bus.Role) string { return "$" + bus.NKeyEnv(r) },
	} {
		t.Run(name, func(t *testing.T) {
			opts := loadConfig(t, l.NATSAccounts(key))
			type user struct {
				account string
				perms   *server.Permissions
			}
			got := map[string]user{}
			for _, u := range opts.Nkeys {
				got[u.Nkey] = user{u.Account.Name, u.Permissions}
			}
			for _, r := range bus.Roles() {
				u, ok := got[creds.PublicKey(r)]
				if !ok {
					t.Fatalf("no user for %s", r)
				}
				if u.account != r.Account() {
					t.Errorf("%s is in account %q, want %q", r, u.account, r.Account())
				}
				p, want := u.perms, l.Permissions(r)
				if want.Unrestricted {
					if p != nil {
						t.Errorf("%s: permissions %+v, want none (everything)", r, p)
					}
					continue
				}
				gotP := bus.Permissions{PublishAllow: p.Publish.Allow, PublishDeny: p.Publish.Deny, SubscribeAllow: p.Subscribe.Allow, SubscribeDeny: p.Subscribe.Deny}
				if diff := cmp.Diff(want, gotP); diff != "" {
					t.Errorf("%s (-want +loaded):\n%s", r, diff)
				}
			}
		})
	}
}

// A server started from the accounts block has the exports and imports of
// the embedded server, account by account (the node account is the
// embedded server's global account).
func TestNATSAccountsLinkAsTheEmbeddedServer(t *testing.T) {
	creds, err := bus.LoadOrCreateCredentials(filepath.Join(t.TempDir(), bus.CredentialsDir))
	if err != nil {
		t.Fatal(err)
	}
	l := bus.DefaultLayout()
	embedded, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	defer embedded.Shutdown()
	opts := loadConfig(t, l.NATSAccounts(creds.PublicKey))
	opts.JetStream, opts.StoreDir, opts.NoSigs, opts.NoLog, opts.DontListen = true, t.TempDir(), true, true, true
	external, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	external.Start()
	defer func() { external.Shutdown(); external.WaitForShutdown() }()
	if !external.ReadyForConnections(bus.DefaultReadyTimeout) {
		t.Fatal("the server of the configuration did not start")
	}
	for _, r := range bus.Roles() {
		t.Run(string(r), func(t *testing.T) {
			name := r.Account()
			if r == bus.RoleNode {
				name = "$G"
			}
			want := links(t, embedded.NATSServer(), name)
			got := links(t, external, r.Account())
			if len(want) == 0 {
				t.Fatal("the embedded account has no exports or imports")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-embedded +configuration):\n%s", r, diff)
			}
		})
	}
}

// links lists the exports and imports of account name on srv, one line
// each, sorted, the global account named as the node account.
func links(t *testing.T, srv *server.Server, name string) []string {
	t.Helper()
	az, err := srv.Accountz(&server.AccountzOptions{Account: name})
	if err != nil || az.Account == nil {
		t.Fatalf("account %s: %v", name, err)
	}
	node := func(s string) string { return strings.ReplaceAll(s, "$G", bus.NodeAccount) }
	var out []string
	for _, e := range az.Account.Exports {
		accs := slices.Clone(e.ApprovedAccounts)
		for i := range accs {
			accs[i] = node(accs[i])
		}
		slices.Sort(accs)
		out = append(out, fmt.Sprintf("export %s %s %s %v", e.Type, e.Subject, e.ResponseType, accs))
	}
	for _, i := range az.Account.Imports {
		out = append(out, node(fmt.Sprintf("import %s %s from %s as %s", i.Type, i.Subject, i.Account, i.LocalSubject)))
	}
	slices.Sort(out)
	return out
}

func loadConfig(t *testing.T, block string) *server.Options {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\n"+block), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, numbered(block))
	}
	return opts
}

func numbered(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%3d %s", i+2, lines[i])
	}
	return strings.Join(lines, "\n")
}
