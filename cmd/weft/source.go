package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events/jetstream"
	"github.com/weft-run/weft/projections"
)

// defaultNATSURL is where the read and decision commands look for a
// running node (weft serve listens there by default).
const defaultNATSURL = "nats://127.0.0.1:4222"

// defaultTimeout bounds a command that talks to a node.
const defaultTimeout = 30 * time.Second

// errNoLog: --data names a directory that holds no event log.
var errNoLog = errors.New("no event log in the data directory")

// sourceFlags say where a command reads the log: a running node over NATS
// (--nats) or a stopped node's data directory (--data).
type sourceFlags struct {
	natsURL   string
	dataDir   string
	timeout   time.Duration
	allowData bool // the command can read a data directory
	auth      *natsAuth
	fs        *pflag.FlagSet
}

// addSourceFlags registers --nats, --timeout, the authentication flags
// (connecting as a reader) and, when allowData, --data.
func addSourceFlags(fs *pflag.FlagSet, allowData bool) *sourceFlags {
	return addSourceFlagsAs(fs, allowData, bus.RoleReader)
}

// addSourceFlagsAs is addSourceFlags for a command that connects as role.
func addSourceFlagsAs(fs *pflag.FlagSet, allowData bool, role bus.Role) *sourceFlags {
	s := &sourceFlags{allowData: allowData, fs: fs}
	fs.StringVar(&s.natsURL, "nats", envOr(natsURLEnv, defaultNATSURL), "the running node's NATS `URL` (a comma-separated list: the seed URLs of a cluster)")
	if allowData {
		fs.StringVar(&s.dataDir, "data", "", "read a stopped node's data `DIR` instead of a running node (starts an embedded server on it, with no listener)")
	}
	fs.DurationVar(&s.timeout, "timeout", defaultTimeout, "give up after this long")
	s.auth = addNATSAuthFlags(fs, role)
	return s
}

// check validates the flags after parsing.
func (s *sourceFlags) check() error {
	set := setFlags(s.fs)
	switch {
	case set["data"] && set["nats"]:
		return usageError(s.fs, "--data and --nats exclude each other")
	case set["data"] && s.dataDir == "":
		return usageError(s.fs, "--data needs a directory")
	case s.dataDir == "" && s.natsURL == "":
		return usageError(s.fs, "--nats needs a URL")
	case s.timeout <= 0:
		return usageError(s.fs, "--timeout must be positive, got %v", s.timeout)
	}
	if s.dataDir != "" {
		for _, name := range natsAuthFlags {
			if set[name] {
				return usageError(s.fs, "--%s is for a node reached with --nats, not --data", name)
			}
		}
	}
	return s.auth.check(s.fs)
}

// logSource is an open event log: a NATS connection (to a running node, or
// in-process to an embedded server on a data directory) and the JetStream
// event store over it.
type logSource struct {
	nc     *nats.Conn
	server *bus.Server       // the embedded server of --data, nil for --nats
	lock   *weft.DataDirLock // the lock of the --data directory, nil for --nats
	store  *jetstream.Store
	where  string // the URL or the data directory, for messages
}

// openSource connects as the flags say. The caller closes the source.
func openSource(ctx context.Context, f *sourceFlags) (*logSource, error) {
	src := &logSource{}
	if f.dataDir != "" {
		logDir := filepath.Join(f.dataDir, "nats")
		if _, err := os.Stat(logDir); err != nil {
			return nil, fmt.Errorf("open %s: %w (%v)", f.dataDir, errNoLog, err)
		}
		lock, err := lockToRead(f.dataDir)
		if err != nil {
			return nil, err
		}
		src.lock = lock
		srv, err := bus.StartServer(bus.ServerConfig{StoreDir: logDir})
		if err != nil {
			src.Close()
			return nil, fmt.Errorf("open the event log in %s: %w", f.dataDir, err)
		}
		nc, err := srv.Connect()
		if err != nil {
			srv.Shutdown()
			src.Close()
			return nil, fmt.Errorf("open the event log in %s: %w", f.dataDir, err)
		}
		src.server, src.nc, src.where = srv, nc, f.dataDir
	} else {
		nc, err := connect(ctx, f.natsURL, f.auth.options()...)
		if err != nil {
			return nil, err
		}
		src.nc, src.where = nc, f.natsURL
	}
	store, err := jetstream.New(ctx, src.nc)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("open the event log at %s: %w", src.where, err)
	}
	src.store = store
	return src, nil
}

// connect connects to the node at url (a comma-separated list), failing
// fast when nothing answers.
func connect(ctx context.Context, url string, opts ...bus.ConnectOption) (*nats.Conn, error) {
	nc, err := bus.Connect(ctx, splitURLs(url), append(opts, bus.WithName("weft-cli"))...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w (%s)", url, err, connectHint(err))
	}
	return nc, nil
}

// connectHint says what to try after a failed connect.
func connectHint(err error) string {
	if strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		return "the node requires credentials: pass --creds-dir DATA/credentials of the node (weft serve prints it) or set $" + credsDirEnv
	}
	return "is `weft serve` running there? a stopped node's data is read with --data DIR"
}

// Close closes the store, the connection and the embedded server.
func (s *logSource) Close() {
	if s.store != nil {
		_ = s.store.Close()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.server != nil {
		s.server.Shutdown()
	}
	_ = s.lock.Release()
}

// lastPosition returns the Position of the last event in the log (0 for an
// empty log): the JetStream stream's last sequence.
func (s *logSource) lastPosition(ctx context.Context) (uint64, error) {
	js, err := natsjs.New(s.nc)
	if err != nil {
		return 0, fmt.Errorf("the log's last position: %w", err)
	}
	st, err := js.Stream(ctx, jetstream.DefaultStreamName)
	if err != nil {
		return 0, fmt.Errorf("the log's last position: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("the log's last position: %w", err)
	}
	return info.State.LastSeq, nil
}

// build catches projs up with the whole log.
func (s *logSource) build(ctx context.Context, projs ...projections.Projection) (projections.Progress, error) {
	p, err := projections.NewRunner(s.store, projs).CatchUp(ctx)
	if err != nil {
		return p, fmt.Errorf("read the log at %s: %w", s.where, err)
	}
	return p, nil
}

// withSource parses nothing: it opens the source of f under f's timeout,
// runs fn and closes the source.
func withSource(ctx context.Context, f *sourceFlags, fn func(ctx context.Context, src *logSource) error) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	src, err := openSource(ctx, f)
	if err != nil {
		return err
	}
	defer src.Close()
	return fn(ctx, src)
}

// parseSessionArgs parses the flags and the one SESSION id of a command
// that reads one session's log, and checks the source flags.
func parseSessionArgs(fs *pflag.FlagSet, src *sourceFlags, args []string, checks ...func() error) (string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageError(fs, "needs exactly one SESSION id, got %q", pos)
	}
	if err := src.check(); err != nil {
		return "", err
	}
	if err := runChecks(checks); err != nil {
		return "", err
	}
	return pos[0], nil
}

// parseNoArgs parses the flags of a command that reads the whole log and
// takes no arguments, and checks the source flags.
func parseNoArgs(fs *pflag.FlagSet, src *sourceFlags, args []string, checks ...func() error) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fs, "takes no arguments, got %q", pos)
	}
	if err := src.check(); err != nil {
		return err
	}
	return runChecks(checks)
}

// runChecks runs the flag checks in order and returns the first error.
func runChecks(checks []func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// envOr returns the environment variable name, or def when it is unset or
// empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
