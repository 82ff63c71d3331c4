package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// SyncPolicy says when the embedded server's JetStream file store calls
// fsync. It decides what an acknowledged publish (and so an acknowledged
// event append) survives.
type SyncPolicy uint8

const (
	// SyncPeriodic is the nats-server default. A publish is acknowledged
	// once the server has accepted it into its in-memory write buffer;
	// the buffer is written to the block file within milliseconds and the
	// file is fsynced every SyncInterval (server default: 2 minutes).
	// An acknowledged publish survives a clean shutdown and, once written
	// (a few milliseconds), a crash of the process; it can be lost if the
	// machine loses power or the kernel crashes before the next fsync.
	SyncPeriodic SyncPolicy = iota
	// SyncAlways writes and fsyncs every stored message before the
	// publish is acknowledged (an atomic batch is fsynced once, at its
	// commit). An acknowledged publish survives a process crash and a
	// power loss, as far as the disk honours fsync. It is the slower
	// setting: each acknowledgement waits for the disk.
	SyncAlways
)

func (p SyncPolicy) String() string {
	switch p {
	case SyncPeriodic:
		return "periodic"
	case SyncAlways:
		return "always"
	}
	return "SyncPolicy(" + strconv.Itoa(int(p)) + ")"
}

// DefaultReadyTimeout is how long StartServer waits for the server to
// accept connections when ServerConfig.ReadyTimeout is zero.
const DefaultReadyTimeout = 10 * time.Second

// ServerConfig configures an embedded nats-server. The zero value is not
// usable: StoreDir is required.
type ServerConfig struct {
	// StoreDir is the JetStream data directory (created if missing).
	// Restarting a server on the same directory recovers every stream.
	StoreDir string
	// Name is the server name; empty lets nats-server pick its id.
	Name string
	// Listen is the host:port to accept client connections on, such as
	// "127.0.0.1:4222" or "127.0.0.1:-1" (a random free port). Empty, the
	// default, opens no port: clients connect in-process (Server.Connect).
	// A host that is not a loopback address needs TLS or InsecureListen;
	// a listening server should admit only Credentials.
	Listen string
	// Sync is the fsync policy of the JetStream file store.
	Sync SyncPolicy
	// SyncInterval is the fsync period under SyncPeriodic; zero keeps the
	// server default (2 minutes). It is ignored under SyncAlways.
	SyncInterval time.Duration
	// MaxPayload is the largest message the server accepts, in bytes;
	// zero keeps the server default (1 MiB).
	MaxPayload int32
	// Username and Password, or Token, require clients to authenticate.
	// They are for servers that Listen; in-process connections from
	// Server.Connect pass them automatically. Set at most one of the two.
	Username, Password string
	Token              string
	// Credentials, when set, admit only its nkey users, each with its
	// role's permissions in Layout (see Role): the authorization of a
	// server that listens for other processes. The node role is in the
	// server's global account, which holds the streams; every lesser role
	// is in an account of its own that imports only what it uses
	// (Layout.Imports), and the server runs the JetStream API guard
	// (ServeJSGuard) their consumer requests go through. It excludes
	// Username, Password and Token. In-process connections
	// (Server.Connect) use the node role.
	Credentials *Credentials
	// Layout names the stream, bucket and subjects the role permissions
	// protect; zero means DefaultLayout.
	Layout Layout
	// TLS, when set, makes the listener require TLS with this certificate.
	TLS *ServerTLS
	// InsecureListen accepts the risk of a Listen host that is not a
	// loopback address without TLS: credentials and events then cross
	// the network in clear text. Without it such a server is refused
	// with an error wrapping ErrInsecureListen.
	InsecureListen bool
	// ReadyTimeout bounds the wait for the server to accept connections;
	// zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Logger receives the server's log lines (notices at Info, debug and
	// trace at Debug). Nil keeps the server silent.
	Logger *slog.Logger
	// Debug and Trace enable the server's verbose logging (with Logger).
	Debug, Trace bool
}

// ServerTLS names the PEM files of the listener's certificate and key.
type ServerTLS struct {
	CertFile, KeyFile string
}

// ErrInsecureListen is matched (errors.Is) by the error of StartServer for
// a Listen address that other machines can reach when the server has no
// TLS and InsecureListen is not set.
var ErrInsecureListen = errors.New("bus: a non-loopback listener without TLS")

// ErrServerNotReady is returned by StartServer when the server does not
// become ready for connections within the ready timeout.
var ErrServerNotReady = errors.New("bus: embedded nats-server not ready")

// Server is an embedded nats-server with JetStream enabled. It installs no
// signal handlers and never exits the process. Shutdown stops it.
type Server struct {
	srv       *server.Server
	cfg       ServerConfig
	guard     *JSGuard   // with Credentials: the JetStream API guard
	guardConn *nats.Conn // and its connection
}

// StartServer starts an embedded nats-server with JetStream on
// cfg.StoreDir and waits until it accepts connections. On failure the
// server is shut down and the error says what was attempted; a server that
// does not become ready returns an error wrapping ErrServerNotReady.
func StartServer(cfg ServerConfig) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("bus: start server: StoreDir is required")
	}
	if cfg.Token != "" && (cfg.Username != "" || cfg.Password != "") {
		return nil, errors.New("bus: start server: set Token or Username/Password, not both")
	}
	if cfg.Credentials != nil && (cfg.Token != "" || cfg.Username != "" || cfg.Password != "") {
		return nil, errors.New("bus: start server: set Credentials or Token or Username/Password, not more")
	}
	if cfg.Layout.Subjects.Root() == "" {
		cfg.Layout = DefaultLayout()
	}
	opts := &server.Options{
		ServerName:    cfg.Name,
		JetStream:     true,
		StoreDir:      cfg.StoreDir,
		NoSigs:        true,
		NoLog:         cfg.Logger == nil,
		DontListen:    cfg.Listen == "",
		Debug:         cfg.Debug,
		Trace:         cfg.Trace,
		MaxPayload:    cfg.MaxPayload,
		Username:      cfg.Username,
		Password:      cfg.Password,
		Authorization: cfg.Token,
		// The embedded server has no HTTP monitor, no cluster and no
		// profiling port.
		HTTPPort: 0,
	}
	switch cfg.Sync {
	case SyncPeriodic:
		opts.SyncInterval = cfg.SyncInterval
	case SyncAlways:
		opts.SyncAlways = true
	default:
		return nil, fmt.Errorf("bus: start server: unknown sync policy %v", cfg.Sync)
	}
	if cfg.Listen != "" {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("bus: start server: listen address %q: %w", cfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < -1 || p > 65535 {
			return nil, fmt.Errorf("bus: start server: listen address %q: bad port", cfg.Listen)
		}
		opts.Host, opts.Port = host, p
		if cfg.TLS == nil && !cfg.InsecureListen && !IsLoopback(host) {
			return nil, fmt.Errorf("bus: start server: listen address %q: %w (set ServerConfig.TLS, or InsecureListen to accept the risk)", cfg.Listen, ErrInsecureListen)
		}
		if p > 0 {
			// nats-server reports a port it cannot bind only in its log
			// and is then never ready: say so now, not after ReadyTimeout.
			ln, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return nil, fmt.Errorf("bus: start server: %w: cannot listen on %s (is another server using the port?): %w", ErrServerNotReady, cfg.Listen, err)
			}
			_ = ln.Close()
		}
	}
	if cfg.TLS != nil {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile})
		if err != nil {
			return nil, fmt.Errorf("bus: start server: tls: %w", err)
		}
		opts.TLSConfig, opts.TLS = tc, true
	}
	if cfg.Credentials != nil {
		roleAccounts(opts, cfg.Credentials, cfg.Layout)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("bus: start server: %w", err)
	}
	if cfg.Credentials != nil {
		if err := linkAccounts(srv, cfg.Layout); err != nil {
			return nil, fmt.Errorf("bus: start server: accounts: %w", err)
		}
	}
	if cfg.Logger != nil {
		srv.SetLogger(slogLogger{cfg.Logger}, cfg.Debug, cfg.Trace)
	}
	timeout := cfg.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	srv.Start()
	if !srv.ReadyForConnections(timeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("bus: start server on %q: %w after %v", cfg.StoreDir, ErrServerNotReady, timeout)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("bus: start server on %q: JetStream did not start", cfg.StoreDir)
	}
	s := &Server{srv: srv, cfg: cfg}
	if cfg.Credentials != nil {
		if err := s.startGuard(); err != nil {
			s.Shutdown()
			return nil, fmt.Errorf("bus: start server on %q: %w", cfg.StoreDir, err)
		}
	}
	return s, nil
}

// startGuard enables JetStream in the node account (the global account,
// which has it by default only when it is the only account) and runs the
// JetStream API guard on an in-process connection of the node role.
func (s *Server) startGuard() error {
	if !s.srv.GlobalAccount().JetStreamEnabled() {
		if err := s.srv.GlobalAccount().EnableJetStream(nil, nil); err != nil {
			return fmt.Errorf("JetStream in the node account: %w", err)
		}
	}
	nc, err := s.Connect(nats.Name("weft-jsguard"))
	if err != nil {
		return err
	}
	g, err := ServeJSGuard(nc, s.cfg.Layout)
	if err != nil {
		nc.Close()
		return err
	}
	s.guard, s.guardConn = g, nc
	return nil
}

// Connect opens a client connection to the server in-process (no network),
// with the configured credentials. Extra nats options are applied after
// weft's defaults. The caller closes the connection.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	all := []nats.Option{nats.InProcessServer(s.srv), nats.Name("weft-inprocess")}
	switch {
	case s.cfg.Credentials != nil:
		opt, err := nats.NkeyOptionFromSeed(s.cfg.Credentials.SeedFile(RoleNode))
		if err != nil {
			return nil, fmt.Errorf("bus: connect in-process: node credentials: %w", err)
		}
		all = append(all, opt)
	case s.cfg.Token != "":
		all = append(all, nats.Token(s.cfg.Token))
	case s.cfg.Username != "":
		all = append(all, nats.UserInfo(s.cfg.Username, s.cfg.Password))
	}
	nc, err := nats.Connect("", append(all, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect in-process: %w", err)
	}
	return nc, nil
}

// Credentials returns the server's credentials, nil when it has none.
func (s *Server) Credentials() *Credentials { return s.cfg.Credentials }

// ClientURL returns the nats:// URL clients in other processes connect to,
// or "" when the server does not listen (ServerConfig.Listen is empty).
func (s *Server) ClientURL() string {
	if s.cfg.Listen == "" {
		return ""
	}
	return s.srv.ClientURL()
}

// StoreDir returns the JetStream data directory.
func (s *Server) StoreDir() string { return s.cfg.StoreDir }

// Sync returns the server's fsync policy.
func (s *Server) Sync() SyncPolicy { return s.cfg.Sync }

// NATSServer returns the underlying nats-server, for monitoring and tests.
func (s *Server) NATSServer() *server.Server { return s.srv }

// Shutdown stops the server, closing every client connection, and waits
// until it has stopped and flushed its stores. It is idempotent.
func (s *Server) Shutdown() {
	if s.guardConn != nil {
		_ = s.guard.Close()
		s.guardConn.Close()
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

// slogLogger adapts a *slog.Logger to nats-server's Logger. Fatalf logs at
// Error level and never exits the process.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Noticef(format string, v ...any) { s.l.Info(fmt.Sprintf(format, v...)) }
func (s slogLogger) Warnf(format string, v ...any)   { s.l.Warn(fmt.Sprintf(format, v...)) }
func (s slogLogger) Fatalf(format string, v ...any) {
	s.l.Error(fmt.Sprintf(format, v...), "fatal", true)
}
func (s slogLogger) Errorf(format string, v ...any) { s.l.Error(fmt.Sprintf(format, v...)) }
func (s slogLogger) Debugf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s slogLogger) Tracef(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "trace", true)
}
