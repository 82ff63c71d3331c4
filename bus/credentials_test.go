package bus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/bus/bustest"

	"github.com/nats-io/nkeys"

	"github.com/weft-run/weft/bus"
)

// First use generates one private seed file per role; a second load finds
// the same keys.
func TestLoadOrCreateCredentials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), bus.CredentialsDir)
	first, err := bus.LoadOrCreateCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory: %v, %v; want mode 0700", st.Mode(), err)
	}
	seen := map[string]bool{}
	for _, r := range bus.Roles() {
		st, err := os.Stat(first.SeedFile(r))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s seed: %v, %v; want mode 0600", r, st.Mode(), err)
		}
		pub := first.PublicKey(r)
		if !strings.HasPrefix(pub, "U") || seen[pub] {
			t.Fatalf("%s public key %q: want a distinct user key", r, pub)
		}
		seen[pub] = true
	}
	again, err := bus.LoadOrCreateCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range bus.Roles() {
		if again.PublicKey(r) != first.PublicKey(r) {
			t.Fatalf("%s: the second load generated a new key", r)
		}
	}
}

// A seed file others can read, or one that holds no nkey user seed, is
// refused and left alone; the error never shows the file's content.
func TestLoadOrCreateCredentialsRefusesBadFiles(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
	}{
		{"readable by others", "", 0o644},
		{"not a seed", "not-a-seed-SECRETVALUE", 0o600},
		{"an account seed", "", 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), bus.CredentialsDir)
			c, err := bus.LoadOrCreateCredentials(dir)
			if err != nil {
				t.Fatal(err)
			}
			file := c.SeedFile(bus.RoleApprover)
			content := tt.content
			if tt.name == "an account seed" {
				kp, err := nkeys.CreateAccount()
				if err != nil {
					t.Fatal(err)
				}
				seed, _ := kp.Seed()
				content = string(seed)
			}
			if content != "" {
				if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(file, tt.mode); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(file)
			_, err = bus.LoadOrCreateCredentials(dir)
			if !errors.Is(err, bus.ErrBadCredentials) {
				t.Fatalf("err = %v, want ErrBadCredentials", err)
			}
			if strings.Contains(err.Error(), "SECRETVALUE") || content != "" && strings.Contains(err.Error(), content) {
				t.Fatalf("the error shows the file's content: %v", err)
			}
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Fatal("the bad file was replaced")
			}
		})
	}
}

// A server with credentials admits each role's seed and refuses a
// connection without one.
func TestServerWithCredentials(t *testing.T) {
	dir := t.TempDir()
	creds, err := bus.LoadOrCreateCredentials(filepath.Join(dir, bus.CredentialsDir))
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, bus.ServerConfig{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:-1", Credentials: creds})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if nc, err := bus.Connect(ctx, []string{srv.ClientURL()}); err == nil {
		nc.Close()
		t.Fatal("a connection without credentials was admitted")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("err = %v, want an authorization violation", err)
	}
	for _, r := range bus.Roles() {
		nc, err := bus.Connect(ctx, []string{srv.ClientURL()}, bus.WithRoleCredentials(creds.Dir(), r))
		if err != nil {
			t.Fatalf("connect as %s: %v", r, err)
		}
		nc.Close()
	}
	nc, err := srv.Connect()
	if err != nil {
		t.Fatalf("in-process connection (node role): %v", err)
	}
	nc.Close()
	if _, err := bus.Connect(ctx, []string{srv.ClientURL()}, bus.WithRoleCredentials(t.TempDir(), bus.RoleReader)); !errors.Is(err, bus.ErrBadCredentials) {
		t.Fatalf("connect with a directory without credentials: %v, want ErrBadCredentials", err)
	}
}

// A listener other machines can reach is refused without TLS, unless the
// risk is accepted; with TLS it starts and clients connect with TLS.
func TestInsecureListenIsRefused(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:-1", ":-1", "[::]:-1", "192.0.2.1:4222", "weft.example:4222"} {
		_, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: listen})
		if !errors.Is(err, bus.ErrInsecureListen) {
			t.Errorf("Listen %q: err = %v, want ErrInsecureListen", listen, err)
		}
	}
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "::1", "localhost", "[::1]"} {
		if !bus.IsLoopback(host) {
			t.Errorf("IsLoopback(%q) = false", host)
		}
	}
	cert, key := bustest.SelfSignedCert(t)
	srv := start(t, bus.ServerConfig{Listen: "127.0.0.1:-1", TLS: &bus.ServerTLS{CertFile: cert, KeyFile: key}})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	nc, err := bus.Connect(ctx, []string{srv.ClientURL()}, bus.WithTLS(bus.TLSConfig{CAFile: cert}))
	if err != nil {
		t.Fatalf("connect with TLS: %v", err)
	}
	defer nc.Close()
	if !nc.TLSRequired() {
		t.Fatal("the server does not require TLS")
	}
}

func TestParseRole(t *testing.T) {
	for _, r := range bus.Roles() {
		if got, err := bus.ParseRole(string(r)); err != nil || got != r {
			t.Errorf("ParseRole(%q) = %q, %v", r, got, err)
		}
	}
	for _, bad := range []string{"", "Node", "admin", "approvers"} {
		if _, err := bus.ParseRole(bad); !errors.Is(err, bus.ErrUnknownRole) {
			t.Errorf("ParseRole(%q): %v, want ErrUnknownRole", bad, err)
		}
	}
}
