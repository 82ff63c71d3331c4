package events

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The files of a data directory that hold its chain keys.
const (
	// ChainKeysFile holds the secret keyring (mode 0600): the seeds of
	// the current key and of the keys it replaced. Only nodes read it.
	ChainKeysFile = "chain-keys.json"
	// KeyringFile holds the public keyring (mode 0644): what verifiers of
	// checkpoints are given.
	KeyringFile = "chain-keyring.json"
)

const (
	chainKeysFormat = "weft.chain-keys.v1"
	keyringFormat   = "weft.chain-keyring.v1"
)

// chainKeysFileJSON is the JSON of a ChainKeysFile: the keys oldest first,
// the last one current.
type chainKeysFileJSON struct {
	Format string `json:"format"`
	Keys   []struct {
		ID      string    `json:"id"`
		Seed    []byte    `json:"seed"`
		Created time.Time `json:"created"`
	} `json:"keys"`
}

type keyringFileJSON struct {
	Format string      `json:"format"`
	Keys   []PublicKey `json:"keys"`
}

// ReadChainKeys reads a secret keyring file. It refuses a file that other
// users may read or write (its mode must not go beyond 0600), one that does
// not decode, and a key whose id does not match its seed: errors wrap
// ErrBadKey and never hold key material.
func ReadChainKeys(path string) (*ChainKeys, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("chain keys: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o: other users may read it (want 0600)", ErrBadKey, path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chain keys: %w", err)
	}
	var f chainKeysFileJSON
	if err := decodeFile(b, &f); err != nil || f.Format != chainKeysFormat {
		return nil, fmt.Errorf("%w: %s is not a %s file (%v)", ErrBadKey, path, chainKeysFormat, err)
	}
	keys := make([]*ChainKey, len(f.Keys))
	for i, fk := range f.Keys {
		k, err := ChainKeyFromSeed(fk.Seed, fk.Created)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", path, i, err)
		}
		if k.id != fk.ID {
			return nil, fmt.Errorf("%w: %s: key %d has id %q, its seed makes %q", ErrBadKey, path, i, fk.ID, k.id)
		}
		keys[i] = k
	}
	ks, err := newChainKeys(keys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

// WriteChainKeys writes ks to path, mode 0600, replacing the file
// atomically.
func WriteChainKeys(path string, ks *ChainKeys) error {
	f := chainKeysFileJSON{Format: chainKeysFormat}
	for _, k := range ks.keys {
		f.Keys = append(f.Keys, struct {
			ID      string    `json:"id"`
			Seed    []byte    `json:"seed"`
			Created time.Time `json:"created"`
		}{k.id, k.seed, k.created})
	}
	return writeJSONFile(path, f, 0o600)
}

// ReadPublicKeyring reads a public keyring file.
func ReadPublicKeyring(path string) (*PublicKeyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chain keyring: %w", err)
	}
	var f keyringFileJSON
	if err := decodeFile(b, &f); err != nil || f.Format != keyringFormat {
		return nil, fmt.Errorf("%w: %s is not a %s file (%v)", ErrBadKey, path, keyringFormat, err)
	}
	r := &PublicKeyring{byID: make(map[string]PublicKey, len(f.Keys))}
	for i, p := range f.Keys {
		if len(p.Key) != ed25519.PublicKeySize || KeyIDOf(p.Key) != p.ID {
			return nil, fmt.Errorf("%w: %s: key %d (%q) is not a public key of that id", ErrBadKey, path, i, p.ID)
		}
		r.keys = append(r.keys, p)
		r.byID[p.ID] = p
	}
	if len(r.keys) == 0 {
		return nil, fmt.Errorf("%w: %s holds no key", ErrBadKey, path)
	}
	return r, nil
}

// WritePublicKeyring writes r to path, mode 0644, replacing the file
// atomically.
func WritePublicKeyring(path string, r *PublicKeyring) error {
	return writeJSONFile(path, keyringFileJSON{Format: keyringFormat, Keys: r.keys}, 0o644)
}

// LoadOrCreateChainKeys returns the chain keys of data directory dir: those
// in dir/ChainKeysFile, or, on first start, a fresh keyring written there
// (mode 0600). It (re)writes dir/KeyringFile, the public keyring, when it
// is missing or does not match.
func LoadOrCreateChainKeys(dir string) (*ChainKeys, error) {
	path := filepath.Join(dir, ChainKeysFile)
	ks, err := ReadChainKeys(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ks, err = NewChainKeys(); err != nil {
			return nil, err
		}
		if err := WriteChainKeys(path, ks); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	ring := filepath.Join(dir, KeyringFile)
	if have, err := ReadPublicKeyring(ring); err != nil || !samePublic(have, ks.Public()) {
		if err := WritePublicKeyring(ring, ks.Public()); err != nil {
			return nil, err
		}
	}
	return ks, nil
}

func samePublic(a, b *PublicKeyring) bool {
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i := range a.keys {
		if a.keys[i].ID != b.keys[i].ID || !bytes.Equal(a.keys[i].Key, b.keys[i].Key) {
			return false
		}
	}
	return true
}

// writeJSONFile writes v as indented JSON to path with mode perm, through a
// temporary file in the same directory renamed over path.
func writeJSONFile(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// decodeFile decodes the one JSON value of a key or checkpoint file,
// refusing unknown fields and trailing data. Its errors name no values.
func decodeFile(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}
