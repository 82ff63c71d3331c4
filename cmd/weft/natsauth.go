package main

import (
	"flag"
	"os"

	"github.com/weft-run/weft/bus"
)

// natsAuth holds the authentication and TLS flags of a command that
// connects to NATS (weft worker, and the read and decision commands with
// --nats). Secrets come from the
// environment (passwordEnv, tokenEnv), never from the command line.
type natsAuth struct {
	user, credsFile, nkeySeedFile string
	tls                           bus.TLSConfig
}

// natsAuthFlags are the flags addNATSAuthFlags registers.
var natsAuthFlags = []string{"user", "creds", "nkey", "tls-ca", "tls-cert", "tls-key"}

// addNATSAuthFlags registers --user, --creds, --nkey, --tls-ca, --tls-cert
// and --tls-key on fs, with the same meaning as weft serve's.
func addNATSAuthFlags(fs *flag.FlagSet) *natsAuth {
	a := &natsAuth{}
	fs.StringVar(&a.user, "user", "", "authenticate as `NAME` (the password is read from $"+passwordEnv+")")
	fs.StringVar(&a.credsFile, "creds", "", "authenticate with the NATS credentials `FILE` (JWT and nkey seed)")
	fs.StringVar(&a.nkeySeedFile, "nkey", "", "authenticate with the nkey seed in `FILE`")
	fs.StringVar(&a.tls.CAFile, "tls-ca", "", "connect with TLS, trusting the CA certificates in `FILE`")
	fs.StringVar(&a.tls.CertFile, "tls-cert", "", "the client certificate `FILE` of TLS (with --tls-key)")
	fs.StringVar(&a.tls.KeyFile, "tls-key", "", "the client key `FILE` of TLS (with --tls-cert)")
	return a
}

// check reports a usage error for flags that do not go together.
func (a *natsAuth) check(fs *flag.FlagSet) error {
	if (a.tls.CertFile == "") != (a.tls.KeyFile == "") {
		return usageError(fs, "--tls-cert and --tls-key go together")
	}
	return nil
}

// options returns the bus.Connect options the flags and the environment
// ask for. bus.Connect refuses more than one way to authenticate.
func (a *natsAuth) options() []bus.ConnectOption {
	var opts []bus.ConnectOption
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
