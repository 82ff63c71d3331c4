package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/httpapi"
)

// httpFlags are the flags of serve's HTTP API.
type httpFlags struct {
	addr        string
	tokensFile  string
	tls         httpapi.TLSConfig
	corsOrigins string
	// obs mounts the console and /metrics beside the API
	// (serve_observe.go); nil: the API alone.
	obs *observe
}

// addHTTPFlags registers the HTTP API's flags on fs.
func addHTTPFlags(fs interface {
	StringVar(p *string, name, value, usage string)
}) *httpFlags {
	o := &httpFlags{}
	fs.StringVar(&o.addr, "http", "", "serve the HTTP API on `HOST:PORT` (port 0: any free port; off when not given)")
	fs.StringVar(&o.tokensFile, "http-tokens", "", "the API's bearer tokens `FILE` (lines of PRINCIPAL ROLES TOKEN; default $"+httpapi.TokensEnv+"; without tokens the API listens on loopback only)")
	fs.StringVar(&o.tls.CertFile, "http-tls-cert", "", "serve the API over HTTPS with the certificate `FILE` (with --http-tls-key)")
	fs.StringVar(&o.tls.KeyFile, "http-tls-key", "", "the key `FILE` of --http-tls-cert")
	fs.StringVar(&o.tls.ClientCAFile, "http-client-ca", "", "require API clients to present a certificate signed by a CA in `FILE` (mutual TLS)")
	fs.StringVar(&o.corsOrigins, "http-cors-origin", "", "let browsers call the API from these comma-separated `ORIGINS` (default: no CORS)")
	return o
}

// check refuses flag combinations that do not go together.
func (o *httpFlags) check() error {
	switch {
	case o.addr == "" && (o.tokensFile != "" || o.tls != (httpapi.TLSConfig{}) || o.corsOrigins != ""):
		return errors.New("the --http-* flags need --http HOST:PORT")
	case (o.tls.CertFile == "") != (o.tls.KeyFile == ""):
		return errors.New("--http-tls-cert and --http-tls-key go together")
	case o.tls.ClientCAFile != "" && o.tls.CertFile == "":
		return errors.New("--http-client-ca needs --http-tls-cert and --http-tls-key")
	}
	return nil
}

// httpServer is serve's running HTTP API.
type httpServer struct {
	url  string
	api  *httpapi.API
	srv  *http.Server
	done chan error
}

// startHTTP serves the API of rt's agents on o.addr; stop it with close.
// Without tokens it says on stderr that the API is unauthenticated and on
// loopback only.
func startHTTP(o *httpFlags, rt *weft.Runtime, agents []*weft.Agent, reload func(context.Context) (any, error), stderr io.Writer) (*httpServer, error) {
	tokens, source, err := loadHTTPTokens(o.tokensFile)
	if err != nil {
		return nil, err
	}
	logs := slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	cfg := httpapi.Config{Agents: agents, Tokens: tokens, Logger: slog.New(logs), Reload: reload}
	if o.obs != nil {
		cfg.Logger = o.obs.log // --log-format, --log-level
	}
	if o.corsOrigins != "" {
		for _, origin := range strings.Split(o.corsOrigins, ",") {
			cfg.CORSOrigins = append(cfg.CORSOrigins, strings.TrimSpace(origin))
		}
	}
	api, err := httpapi.New(rt, cfg)
	if err != nil {
		return nil, err
	}
	var tlsCfg *httpapi.TLSConfig
	scheme := "http"
	if o.tls.CertFile != "" {
		tlsCfg, scheme = &o.tls, "https"
	}
	ln, err := api.Listen(o.addr, tlsCfg)
	if err != nil {
		return nil, err
	}
	if api.Unauthenticated() {
		fmt.Fprintf(stderr, "weft serve: the HTTP API has no tokens (--http-tokens FILE or $%s): it is unauthenticated and listens on loopback only\n", httpapi.TokensEnv)
	} else {
		fmt.Fprintf(stderr, "weft serve: the HTTP API authenticates %d token(s) from %s\n", tokens.Len(), source)
	}
	var h http.Handler = api
	if o.obs != nil {
		if h, err = o.obs.handler(api, rt); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	s := &httpServer{url: scheme + "://" + ln.Addr().String(), api: api, done: make(chan error, 1),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logs, slog.LevelWarn)}}
	s.srv.RegisterOnShutdown(api.Close)
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// loadHTTPTokens reads the token list of file, else of $WEFT_HTTP_TOKENS;
// nil when neither is given.
func loadHTTPTokens(file string) (*httpapi.Tokens, string, error) {
	if file != "" {
		t, err := httpapi.LoadTokens(file)
		return t, file, err
	}
	if v := os.Getenv(httpapi.TokensEnv); v != "" {
		t, err := httpapi.ParseTokens(strings.NewReader(v), "$"+httpapi.TokensEnv)
		return t, "$" + httpapi.TokensEnv, err
	}
	return nil, "", nil
}

// close stops the server: the event streams end, requests under way
// finish (up to 10 s).
func (s *httpServer) close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
