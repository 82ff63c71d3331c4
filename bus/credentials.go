package bus

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"
)

// CredentialsDir is the directory, inside a data directory, that holds the
// embedded server's credentials (see LoadOrCreateCredentials).
const CredentialsDir = "credentials"

// ErrBadCredentials is matched (errors.Is) by every error about a
// credentials file that cannot be trusted or used: readable by others than
// its owner, not an nkey user seed, missing.
var ErrBadCredentials = errors.New("bus: bad credentials")

// CredentialsError reports a credentials file that cannot be used. It never
// holds the file's content.
type CredentialsError struct {
	File   string
	Reason string
	Err    error // the cause, if any
}

func (e *CredentialsError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("bus: credentials %s: %s: %v", e.File, e.Reason, e.Err)
	}
	return fmt.Sprintf("bus: credentials %s: %s", e.File, e.Reason)
}

// Is reports whether target is ErrBadCredentials.
func (e *CredentialsError) Is(target error) bool { return target == ErrBadCredentials }

// Unwrap returns the cause.
func (e *CredentialsError) Unwrap() error { return e.Err }

// Credentials are one nkey user per role: the seeds in files
// "<dir>/<role>.nk" (mode 0600, in a directory of mode 0700) and their
// public keys, which an embedded server (ServerConfig.Credentials) admits
// with the role's permissions.
type Credentials struct {
	dir  string
	pubs map[Role]string
}

// SeedFile returns the file that holds role r's nkey seed: a client
// authenticates with it (WithNKeySeedFile, nats.NkeyOptionFromSeed, the
// nats CLI's --nkey, nats.js's nkeyAuthenticator).
func (c *Credentials) SeedFile(r Role) string { return SeedFile(c.dir, r) }

// PublicKey returns role r's nkey public key (the user the server knows).
func (c *Credentials) PublicKey(r Role) string { return c.pubs[r] }

// Dir returns the credentials directory.
func (c *Credentials) Dir() string { return c.dir }

// SeedFile returns the seed file of role r in credentials directory dir.
func SeedFile(dir string, r Role) string { return filepath.Join(dir, string(r)+".nk") }

// LoadOrCreateCredentials loads the credentials in dir, generating on first
// use a new nkey user for each role that has none (written with mode 0600,
// dir created with mode 0700). A seed file that others than its owner may
// read or write, or that does not hold an nkey user seed, is an error
// wrapping ErrBadCredentials: it is never used or replaced silently.
func LoadOrCreateCredentials(dir string) (*Credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bus: credentials directory: %w", err)
	}
	c := &Credentials{dir: dir, pubs: map[Role]string{}}
	for _, r := range Roles() {
		file := SeedFile(dir, r)
		pub, err := loadSeed(file)
		if errors.Is(err, fs.ErrNotExist) {
			pub, err = createSeed(file)
		}
		if err != nil {
			return nil, err
		}
		c.pubs[r] = pub
	}
	return c, nil
}

// LoadSeedFile checks that file is a private nkey user seed file and
// returns its public key.
func LoadSeedFile(file string) (string, error) { return loadSeed(file) }

func loadSeed(file string) (string, error) {
	st, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", &CredentialsError{File: file, Reason: "cannot read", Err: err}
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", &CredentialsError{File: file, Reason: fmt.Sprintf("mode %04o lets others read or write it (want 0600: chmod 600 %s)", perm, file)}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &CredentialsError{File: file, Reason: "cannot read", Err: err}
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(b))
	if err != nil {
		return "", &CredentialsError{File: file, Reason: "not an nkey seed"}
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", &CredentialsError{File: file, Reason: "not an nkey user seed"}
	}
	return pub, nil
}

func createSeed(file string) (string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("bus: generate an nkey: %w", err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("bus: generate an nkey: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("bus: generate an nkey: %w", err)
	}
	// O_EXCL: two processes starting on one directory never overwrite
	// each other's keys; the loser loads the winner's.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadSeed(file)
	}
	if err != nil {
		return "", &CredentialsError{File: file, Reason: "cannot create", Err: err}
	}
	_, werr := f.Write(append(seed, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(file)
		return "", &CredentialsError{File: file, Reason: "cannot write", Err: werr}
	}
	return pub, nil
}
