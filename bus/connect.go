package bus

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultConnectTimeout bounds Connect when ctx has no deadline.
const DefaultConnectTimeout = 10 * time.Second

// ConnectOption configures Connect.
type ConnectOption func(*connectConfig) error

type connectConfig struct {
	opts  []nats.Option
	auths int
}

// WithName sets the connection name shown in the server's monitoring.
func WithName(name string) ConnectOption {
	return func(c *connectConfig) error {
		c.opts = append(c.opts, nats.Name(name))
		return nil
	}
}

// WithUserPassword authenticates with a user name and password.
func WithUserPassword(user, password string) ConnectOption {
	return func(c *connectConfig) error {
		if user == "" {
			return errors.New("empty user name")
		}
		c.auths++
		c.opts = append(c.opts, nats.UserInfo(user, password))
		return nil
	}
}

// WithToken authenticates with a token.
func WithToken(token string) ConnectOption {
	return func(c *connectConfig) error {
		if token == "" {
			return errors.New("empty token")
		}
		c.auths++
		c.opts = append(c.opts, nats.Token(token))
		return nil
	}
}

// WithNKeySeedFile authenticates with the NKey seed stored in file.
func WithNKeySeedFile(file string) ConnectOption {
	return func(c *connectConfig) error {
		opt, err := nats.NkeyOptionFromSeed(file)
		if err != nil {
			return fmt.Errorf("nkey seed %q: %w", file, err)
		}
		c.auths++
		c.opts = append(c.opts, opt)
		return nil
	}
}

// WithRole makes the connection one of role r: its reply subjects use the
// role's inbox prefix (Role.InboxPrefix), the only inbox a server with the
// role permissions lets it subscribe to. It does not authenticate: combine
// it with the role's credentials (WithNKeySeedFile, or WithRoleCredentials).
func WithRole(r Role) ConnectOption {
	return func(c *connectConfig) error {
		if _, err := ParseRole(string(r)); err != nil {
			return err
		}
		if r != RoleNode {
			c.opts = append(c.opts, nats.CustomInboxPrefix(r.InboxPrefix()))
		}
		return nil
	}
}

// WithRoleCredentials authenticates as role r with the seed file of r in
// the credentials directory dir (see LoadOrCreateCredentials), and uses
// r's inbox prefix (WithRole). A seed file others may read is refused
// (ErrBadCredentials).
func WithRoleCredentials(dir string, r Role) ConnectOption {
	return func(c *connectConfig) error {
		if err := WithRole(r)(c); err != nil {
			return err
		}
		file := SeedFile(dir, r)
		if _, err := loadSeed(file); err != nil {
			if !errors.As(err, new(*CredentialsError)) {
				err = &CredentialsError{File: file, Reason: "no " + string(r) + " credentials (does the node keep its data there?)", Err: err}
			}
			return err
		}
		return WithNKeySeedFile(file)(c)
	}
}

// WithCredsFile authenticates with a JWT and NKey credentials file (the
// decentralised auth of NATS operators and accounts).
func WithCredsFile(file string) ConnectOption {
	return func(c *connectConfig) error {
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("creds file: %w", err)
		}
		c.auths++
		c.opts = append(c.opts, nats.UserCredentials(file))
		return nil
	}
}

// TLSConfig names the PEM files of a TLS client configuration. Every field
// is optional: CAFile adds a root CA (the system roots are used otherwise);
// CertFile and KeyFile, set together, present a client certificate.
type TLSConfig struct {
	CAFile   string
	CertFile string
	KeyFile  string
	// ServerName overrides the name the server certificate is checked
	// against (default: the host of the URL).
	ServerName string
}

// WithTLS connects with TLS as configured by cfg.
func WithTLS(cfg TLSConfig) ConnectOption {
	return func(c *connectConfig) error {
		tc, err := cfg.build()
		if err != nil {
			return err
		}
		c.opts = append(c.opts, nats.Secure(tc))
		return nil
	}
}

func (cfg TLSConfig) build() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca %q: no PEM certificates", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("tls: set both CertFile and KeyFile, or neither")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// WithNATSOptions appends raw nats.go options, applied after weft's.
func WithNATSOptions(opts ...nats.Option) ConnectOption {
	return func(c *connectConfig) error {
		c.opts = append(c.opts, opts...)
		return nil
	}
}

// Connect connects to the NATS servers at urls (each "nats://host:port" or
// "tls://host:port"; a server's cluster peers are discovered from it). The
// connection reconnects forever after it is established. The initial
// connect is bounded by ctx's deadline, or DefaultConnectTimeout. At most
// one authentication option may be given. The caller closes the connection.
func Connect(ctx context.Context, urls []string, opts ...ConnectOption) (*nats.Conn, error) {
	if len(urls) == 0 {
		return nil, errors.New("bus: connect: no server URL")
	}
	for _, u := range urls {
		if u == "" || strings.ContainsAny(u, ", \t\n") {
			return nil, fmt.Errorf("bus: connect: bad server URL %q", u)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bus: connect: %w", err)
	}
	var cfg connectConfig
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("bus: connect: %w", err)
		}
	}
	if cfg.auths > 1 {
		return nil, errors.New("bus: connect: more than one authentication option")
	}
	timeout := DefaultConnectTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
		if timeout <= 0 {
			return nil, fmt.Errorf("bus: connect: %w", context.DeadlineExceeded)
		}
	}
	all := append([]nats.Option{
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
	}, cfg.opts...)
	nc, err := nats.Connect(strings.Join(urls, ","), all...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect to %s: %w", redactURLs(urls), err)
	}
	return nc, nil
}

// redactURLs joins urls for an error message with any user info removed.
func redactURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, u := range urls {
		if p, err := url.Parse(u); err == nil && p.User != nil {
			p.User = url.User("REDACTED")
			u = p.String()
		}
		out[i] = u
	}
	return strings.Join(out, ",")
}
