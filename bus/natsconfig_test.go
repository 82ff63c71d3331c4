package bus_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/weft-run/weft/bus"
)

// The authorization block, loaded by nats-server's own configuration
// parser (with the keys inline or from the environment), gives each role
// exactly the permissions of the embedded server.
func TestNATSAuthorizationLoadsAsTheRolePermissions(t *testing.T) {
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
			path := filepath.Join(t.TempDir(), "nats.conf")
			if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\n"+l.NATSAuthorization(key)), 0o600); err != nil {
				t.Fatal(err)
			}
			opts, err := server.ProcessConfigFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*server.Permissions{}
			for _, u := range opts.Nkeys {
				got[u.Nkey] = u.Permissions
			}
			for _, r := range bus.Roles() {
				p, ok := got[creds.PublicKey(r)]
				if !ok {
					t.Fatalf("no user for %s", r)
				}
				want := l.Permissions(r)
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
