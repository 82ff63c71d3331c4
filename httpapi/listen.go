package httpapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// ErrNotLoopback: an API without tokens asked to listen on an address
// other machines can reach.
var ErrNotLoopback = errors.New("httpapi: an API without tokens listens on loopback only")

// TLSConfig makes the API serve HTTPS.
type TLSConfig struct {
	// CertFile and KeyFile are the server's certificate and key (PEM).
	CertFile, KeyFile string
	// ClientCAFile, when set, requires every client to present a
	// certificate signed by one of its CAs (mutual TLS), besides its
	// bearer token.
	ClientCAFile string
}

// Listen opens the API's listener on addr (host:port; port 0 picks a
// free one), with TLS when tlsCfg is set. Without tokens it refuses any
// address that is not loopback (ErrNotLoopback): it checks the address
// actually bound, so ":8080" (every interface) is refused too.
func (a *API) Listen(addr string, tlsCfg *TLSConfig) (net.Listener, error) {
	var conf *tls.Config
	if tlsCfg != nil {
		var err error
		if conf, err = tlsCfg.config(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("httpapi: listen on %s: %w", addr, err)
	}
	if a.tokens.Len() == 0 {
		if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
			_ = ln.Close()
			return nil, fmt.Errorf("%w: %s reaches other machines: give tokens (--http-tokens FILE or $%s) or listen on 127.0.0.1", ErrNotLoopback, addr, TokensEnv)
		}
	}
	if conf != nil {
		ln = tls.NewListener(ln, conf)
	}
	return ln, nil
}

// Unauthenticated reports whether the API runs without tokens (every
// caller is LocalPrincipal), which its server should say at start.
func (a *API) Unauthenticated() bool { return a.tokens.Len() == 0 }

func (c *TLSConfig) config() (*tls.Config, error) {
	if c.CertFile == "" || c.KeyFile == "" {
		return nil, errors.New("httpapi: TLS needs a certificate and a key file")
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("httpapi: TLS certificate: %w", err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("httpapi: client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("httpapi: client CA %s holds no PEM certificate", c.ClientCAFile)
		}
		conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return conf, nil
}
