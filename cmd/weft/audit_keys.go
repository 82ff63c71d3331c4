package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/weft-run/weft/events"
)

// keyFlags say where the audit commands find the chain keys: the secret
// keyring (checks the events' MACs, signs checkpoints) and the public one
// (checks checkpoints).
type keyFlags struct {
	keysFile, keyringFile string
	fs                    *pflag.FlagSet
}

// addKeyFlags registers --keys and --keyring.
func addKeyFlags(fs *pflag.FlagSet) *keyFlags {
	k := &keyFlags{fs: fs}
	fs.StringVar(&k.keysFile, "keys", "", "the nodes' secret chain keyring `FILE`, which checks every event's MAC (default: DIR/"+events.ChainKeysFile+" with --data, $"+chainKeysEnv+" with --nats)")
	fs.StringVar(&k.keyringFile, "keyring", "", "the public chain keyring `FILE`, which checks a checkpoint's signature (default: DIR/"+events.KeyringFile+" with --data, else the public half of --keys)")
	return k
}

// secret returns the secret keyring: --keys, else the data directory's
// file when it exists, else $WEFT_CHAIN_KEYS with --nats; nil when none is
// given. A file that is given or exists but does not load is an error.
func (k *keyFlags) secret(src *sourceFlags) (*events.ChainKeys, error) {
	path := k.keysFile
	switch {
	case path != "":
	case src.dataDir != "":
		path = filepath.Join(src.dataDir, events.ChainKeysFile)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	default:
		if path = os.Getenv(chainKeysEnv); path == "" {
			return nil, nil
		}
	}
	return events.ReadChainKeys(path)
}

// public returns the public keyring: --keyring, else the data directory's
// file when it exists, else the public half of keys (which may be nil);
// nil when there is none.
func (k *keyFlags) public(src *sourceFlags, keys *events.ChainKeys) (*events.PublicKeyring, error) {
	path := k.keyringFile
	if path == "" && src.dataDir != "" {
		path = filepath.Join(src.dataDir, events.KeyringFile)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			path = ""
		}
	}
	switch {
	case path != "":
		return events.ReadPublicKeyring(path)
	case keys != nil:
		return keys.Public(), nil
	}
	return nil, nil
}

// checkpoint reads the checkpoint file at path and checks its signature
// with ring. It returns nil for an empty path.
func readCheckpoint(path string, ring *events.PublicKeyring) (*events.Checkpoint, error) {
	if path == "" {
		return nil, nil
	}
	if ring == nil {
		return nil, fmt.Errorf("%w: checkpoint %s: no public keyring to check its signature (--keyring FILE)", errBadCheckpoint, path)
	}
	cp, err := events.ReadCheckpoint(path)
	if err == nil {
		err = cp.Verify(ring)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errBadCheckpoint, path, err)
	}
	return cp, nil
}

// errBadCheckpoint: the checkpoint given to weft audit does not load or its
// signature does not verify (exit status 1).
var errBadCheckpoint = errors.New("audit: checkpoint refused")
