package events_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// TestLoadOrCreateChainKeys: the first start writes the secret keyring
// mode 0600 and the public one beside it; a second start loads the same
// keys; a secret file others may read, or one whose id does not match its
// seed, is refused, and no error shows the seed.
func TestLoadOrCreateChainKeys(t *testing.T) {
	dir := t.TempDir()
	ks, err := events.LoadOrCreateChainKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, events.ChainKeysFile)
	st, err := os.Stat(secret)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret keyring: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	ring, err := events.ReadPublicKeyring(filepath.Join(dir, events.KeyringFile))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := ring.Key(ks.Current().ID()); !ok || !p.Key.Equal(ks.Current().PublicKey()) {
		t.Errorf("the public keyring does not hold the current key %s", ks.Current().ID())
	}
	again, err := events.LoadOrCreateChainKeys(dir)
	if err != nil || again.Current().ID() != ks.Current().ID() {
		t.Fatalf("second start: %v, key %v, want %s", err, again, ks.Current().ID())
	}
	var f struct {
		Keys []struct {
			ID   string `json:"id"`
			Seed string `json:"seed"`
		} `json:"keys"`
	}
	b, _ := os.ReadFile(secret)
	if err := json.Unmarshal(b, &f); err != nil || len(f.Keys) != 1 {
		t.Fatalf("secret keyring file: %v", err)
	}
	seed := f.Keys[0].Seed
	if s := ks.String() + ks.Current().String(); strings.Contains(s, seed) {
		t.Errorf("String shows the seed: %s", s)
	}

	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := events.ReadChainKeys(secret); !errors.Is(err, events.ErrBadKey) {
		t.Errorf("a secret keyring readable by others: %v, want ErrBadKey", err)
	}
	if _, err := events.LoadOrCreateChainKeys(dir); !errors.Is(err, events.ErrBadKey) {
		t.Errorf("a start on it: %v, want ErrBadKey (not a fresh key)", err)
	}
	forged := strings.Replace(string(b), f.Keys[0].ID, "0000000000000000", 1)
	if err := os.WriteFile(secret, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = events.ReadChainKeys(secret)
	if !errors.Is(err, events.ErrBadKey) || strings.Contains(err.Error(), seed) {
		t.Errorf("a key whose id does not match its seed: %v, want ErrBadKey without the seed", err)
	}
}
