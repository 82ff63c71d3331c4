package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/weft-run/weft/events"
)

// errNoKeys: a command that signs or rotates found no secret chain keys.
var errNoKeys = errors.New("audit: no chain keys")

// checkpointOut is what weft audit checkpoint prints.
type checkpointOut struct {
	File    string    `json:"file"`
	KeyID   string    `json:"key_id"`
	Time    time.Time `json:"time"`
	Streams int       `json:"streams"`
	Events  int       `json:"events"`
}

// runAuditCheckpoint verifies the log with the chain keys (and against a
// previous checkpoint, if given) and writes a signed checkpoint of its
// stream heads.
func runAuditCheckpoint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit checkpoint", "--out FILE [--nats URL | --data DIR] [--keys FILE] [--checkpoint PREVIOUS [--keyring FILE]] [--allow-unkeyed] [--json]", `
Verifies the whole log as weft audit verify does, with the nodes' secret
chain keys (--keys; DIR/chain-keys.json with --data), then writes to --out a
checkpoint of every stream's last version and hash, with the time and the
key id, signed with the current key's Ed25519 half. Keep it outside the
log (another machine, a write-once bucket): weft audit verify --checkpoint
then reports a log that was deleted, truncated or replaced since, or whose
last events were changed. With --checkpoint PREVIOUS the log must also still
reach the previous checkpoint, so that a new checkpoint never blesses a
truncation. Writes nothing when the log does not verify (exit status 1).`, stderr)
	src := addSourceFlags(fs, true)
	kf := addKeyFlags(fs)
	out := fs.String("out", "", "write the checkpoint to `FILE` (- for stdout)")
	prevFile := fs.String("checkpoint", "", "the `PREVIOUS` checkpoint the log must still reach")
	allowUnkeyed := fs.Bool("allow-unkeyed", false, "accept events without a MAC before a stream's first keyed event (a log written before keying)")
	output := addOutputFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(fs, "takes no arguments, got %q", pos)
	case *out == "":
		return usageError(fs, "needs --out FILE")
	}
	if err := src.check(); err != nil {
		return err
	}
	if err := output.check(); err != nil {
		return err
	}
	if !setFlags(fs)["timeout"] {
		src.timeout = time.Hour
	}
	keys, err := kf.secret(src)
	if err != nil {
		return err
	}
	if keys == nil {
		return fmt.Errorf("%w: a checkpoint is signed with the nodes' chain keys (--keys FILE, DIR/%s with --data, $%s)", errNoKeys, events.ChainKeysFile, chainKeysEnv)
	}
	ring, err := kf.public(src, keys)
	if err != nil {
		return err
	}
	prev, err := readCheckpoint(*prevFile, ring)
	if err != nil {
		return err
	}
	opts := events.VerifyOptions{Keys: keys, AllowUnkeyed: *allowUnkeyed, Checkpoint: prev}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		res, poison, err := verifyLog(ctx, s, nil, opts, false, stderr)
		// Poison is not part of any chain: the checkpoint anchors the heads
		// all the same, and says on stderr what audit verify will name.
		(&verifyReport{Quarantined: poison}).writePoison(stderr)
		if err != nil {
			var ce *events.ChainError
			if errors.As(err, &ce) {
				rep := verifyReport{Events: res.Events, Broken: ce}
				rep.writeText(stderr)
				return fmt.Errorf("%w: no checkpoint written: %w", errChainBroken, ce)
			}
			return err
		}
		cp, err := events.NewCheckpoint(res.Heads, keys.Current(), time.Now())
		if err != nil {
			return err
		}
		if *out == "-" {
			_, err = stdout.Write(cp.Encode())
			return err
		}
		if err := events.WriteCheckpoint(*out, cp); err != nil {
			return err
		}
		o := checkpointOut{File: *out, KeyID: cp.KeyID, Time: cp.Time, Streams: len(cp.Streams), Events: res.Events}
		if output.json() {
			return output.write(stdout, o)
		}
		fmt.Fprintf(stdout, "checkpoint of %d streams (%d events) signed with key %s at %s: %s\n",
			o.Streams, o.Events, o.KeyID, o.Time.Format(time.RFC3339), o.File)
		return nil
	})
}

// runAuditRotateKey adds a new current key to a secret chain keyring and
// rewrites the public keyring beside it.
func runAuditRotateKey(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit rotate-key", "(--data DIR | --keys FILE [--keyring FILE])", `
Adds a fresh key to the secret chain keyring and makes it current; the old
keys stay in it, so that the events and checkpoints they signed still
verify, and the public keyring is rewritten with every public key. Nodes key
new events with the new key after their next start: give every node of a
cluster the new keyring file, and verifiers the new public keyring.`, stderr)
	dataDir := fs.String("data", "", "rotate the chain keys of the data `DIR` (DIR/"+events.ChainKeysFile+" and DIR/"+events.KeyringFile+")")
	keysFile := fs.String("keys", "", "rotate the secret chain keyring `FILE`")
	ringFile := fs.String("keyring", "", "with --keys: rewrite the public keyring `FILE` (default: chain-keyring.json beside it)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError(fs, "takes no arguments, got %q", pos)
	case (*dataDir == "") == (*keysFile == ""):
		return usageError(fs, "needs one of --data DIR and --keys FILE")
	case *dataDir != "" && *ringFile != "":
		return usageError(fs, "--keyring goes with --keys")
	}
	path, ring := *keysFile, *ringFile
	if *dataDir != "" {
		path = filepath.Join(*dataDir, events.ChainKeysFile)
	}
	if ring == "" {
		ring = filepath.Join(filepath.Dir(path), events.KeyringFile)
	}
	keys, err := events.ReadChainKeys(path)
	if err != nil {
		return fmt.Errorf("%w: %w", errNoKeys, err)
	}
	old := keys.Current().ID()
	if keys, err = keys.Rotate(); err != nil {
		return err
	}
	if err := events.WriteChainKeys(path, keys); err != nil {
		return err
	}
	if err := events.WritePublicKeyring(ring, keys.Public()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new current chain key %s (previous %s kept to verify older events): %s, public keyring %s\n",
		keys.Current().ID(), old, path, ring)
	return nil
}
