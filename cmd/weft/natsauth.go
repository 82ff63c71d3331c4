package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/weft-run/weft/bus"
)

// natsAuth holds the authentication and TLS flags of a command that
// connects to NATS (weft worker, and the read and decision commands with
// --nats). Secrets come from the
// environment (passwordEnv, tokenEnv), never from the command line.
type natsAuth struct {
	user, credsFile, nkeySeedFile string
	tls                           bus.TLSConfig
	// credsDir is the credentials directory of a node's embedded server
	// (DATA/credentials, which weft serve prints): the command
	// authenticates with the seed of its role there.
	credsDir string
	// role is what the command connects as (--role); empty means
	// defaultRole, the least role the command needs.
	role        string
	defaultRole bus.Role
}

// natsAuthFlags are the flags addNATSAuthFlags registers.
var natsAuthFlags = []string{"user", "creds", "nkey", "tls-ca", "tls-cert", "tls-key", "creds-dir", "role"}

// credsDirEnv names the credentials directory when --creds-dir is not
// given.
const credsDirEnv = "WEFT_CREDS_DIR"

// addNATSAuthFlags registers --user, --creds, --nkey, --creds-dir, --role,
// --tls-ca, --tls-cert and --tls-key on fs, with the same meaning as weft
// serve's. The command connects as role def unless --role says otherwise.
func addNATSAuthFlags(fs *pflag.FlagSet, def bus.Role) *natsAuth {
	a := &natsAuth{defaultRole: def}
	fs.StringVar(&a.credsDir, "creds-dir", "", "authenticate with the role's seed in the node's credentials `DIR` (DATA/credentials, printed by weft serve; default $"+credsDirEnv+")")
	fs.StringVar(&a.role, "role", "", "connect as `ROLE`: node, operator, approver, reader or worker (default "+string(def)+"); picks the seed in --creds-dir and the role's reply subjects")
	fs.StringVar(&a.user, "user", "", "authenticate as `NAME` (the password is read from $"+passwordEnv+")")
	fs.StringVar(&a.credsFile, "creds", "", "authenticate with the NATS credentials `FILE` (JWT and nkey seed)")
	fs.StringVar(&a.nkeySeedFile, "nkey", "", "authenticate with the nkey seed in `FILE`")
	fs.StringVar(&a.tls.CAFile, "tls-ca", "", "connect with TLS, trusting the CA certificates in `FILE`")
	fs.StringVar(&a.tls.CertFile, "tls-cert", "", "the client certificate `FILE` of TLS (with --tls-key)")
	fs.StringVar(&a.tls.KeyFile, "tls-key", "", "the client key `FILE` of TLS (with --tls-cert)")
	return a
}

// check reports a usage error for flags that do not go together.
func (a *natsAuth) check(fs *pflag.FlagSet) error {
	if (a.tls.CertFile == "") != (a.tls.KeyFile == "") {
		return usageError(fs, "--tls-cert and --tls-key go together")
	}
	if a.role != "" {
		if _, err := bus.ParseRole(a.role); err != nil {
			return usageError(fs, "--role: %v", err)
		}
	}
	if a.credsDir == "" && a.user == "" && a.credsFile == "" && a.nkeySeedFile == "" && os.Getenv(tokenEnv) == "" {
		a.credsDir = os.Getenv(credsDirEnv)
	}
	return nil
}

// connectRole is the role the command connects as.
func (a *natsAuth) connectRole() bus.Role {
	if r, err := bus.ParseRole(a.role); err == nil {
		return r
	}
	return a.defaultRole
}

// options returns the bus.Connect options the flags and the environment
// ask for. bus.Connect refuses more than one way to authenticate.
func (a *natsAuth) options() []bus.ConnectOption {
	opts := []bus.ConnectOption{bus.WithRole(a.connectRole())}
	if a.credsDir != "" {
		opts = append(opts, bus.WithRoleCredentials(a.credsDir, a.connectRole()))
	}
	if a.user != "" {
		opts = append(opts, bus.WithUserPassword(a.user, os.Getenv(passwordEnv)))
	}
	if tok := os.Getenv(tokenEnv); tok != "" {
		opts = append(opts, bus.WithToken(tok))
	}
	if a.credsFile != "" {
		opts = append(opts, bus.WithCredsFile(a.credsFile))
	}
	if a.nkeySeedFile != "" {
		opts = append(opts, bus.WithNKeySeedFile(a.nkeySeedFile))
	}
	if a.tls != (bus.TLSConfig{}) {
		opts = append(opts, bus.WithTLS(a.tls))
	}
	return opts
}
