package weft

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// Config configures a Runtime. The zero value is not usable: set DataDir,
// NATSURL (or NATSURLs) or Store.
type Config struct {
	// DataDir is the data directory of the embedded default: the embedded
	// nats-server keeps its JetStream file store (the event log) in
	// DataDir/nats. Restarting on the same directory recovers the log.
	// The runtime holds the directory's lock (see LockDataDir) until
	// Close: a second Start on it, in this process or another, fails with
	// a *DataDirLockedError naming the holder's pid.
	DataDir string
	// NATSURL connects to an external NATS (cluster) instead of embedding
	// a server; the event log is its JetStream.
	NATSURL string
	// Store replaces the JetStream event log (memstore for tests and
	// benchmarks). Messaging still uses NATS: the external one of NATSURL,
	// or an embedded nats-server (in a temporary directory, removed on
	// Close, when DataDir is empty).
	Store events.Store
	// ChainKeys key the event log's chain (see events.ChainKey): the
	// JetStream log the runtime opens keys every event it appends with
	// the current key. Nil with a DataDir means the keys of the data
	// directory (events.LoadOrCreateChainKeys: generated on first start
	// into DataDir/chain-keys.json, mode 0600, with the public keyring
	// beside it); nil without a DataDir (a node of a cluster) writes
	// unkeyed events, which weft audit verify reports. A Store given in
	// Store is keyed by its own options (memstore.WithChainKeys).
	ChainKeys *events.ChainKeys
	// Subjects is the subject scheme; zero means bus.Default ("weft").
	Subjects bus.Subjects
	// Sync is the fsync policy of the embedded server.
	Sync bus.SyncPolicy
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// WorkerQueueWait is how long a call of a pooled remote tool may wait
	// in its worker pool's queue for a worker with room before the runtime
	// takes it back and fails it; zero means actors.DefaultWorkerQueueWait.
	WorkerQueueWait time.Duration
	// MaxPayloadBytes is the largest tool result, tool arguments or model
	// message a run accepts, in bytes of JSON; zero means
	// actors.DefaultMaxPayloadBytes (32 MiB). A larger tool result is
	// returned to the model as an execution error ("result of N bytes
	// exceeds the limit of M bytes"); a larger model response fails the
	// run with a RunError of kind payload_too_large (as does an event the
	// store refuses as too large, such as a model request gathering
	// results beyond the store's limit). Payloads
	// under it but too large for a NATS message travel by reference to the
	// blob store beside the log (see "Large payloads" in the README).
	MaxPayloadBytes int
	// SessionIdle is how long a settled session (no run running) stays in
	// memory without a command before the runtime releases it; its next
	// command rebuilds it from the log. Zero means actors.DefaultSessionIdle
	// (30 s). A service that starts a session per request can set it low.
	SessionIdle time.Duration

	// The fields below configure a node of a cluster on external NATS
	// (NATSURL or NATSURLs); with the embedded server they must stay zero.
	// On external NATS the runtime is one node: it drives only the
	// sessions whose lease it holds (see "Ownership" in the actors package
	// doc).

	// NATSURLs are more seed URLs of the external NATS cluster, tried
	// after NATSURL (which may be empty when these are set).
	NATSURLs []string
	// NATSUser and NATSPassword, NATSToken, NATSNKeySeedFile or
	// NATSCredsFile authenticate to the external NATS; set at most one.
	NATSUser, NATSPassword string
	NATSToken              string
	NATSNKeySeedFile       string
	NATSCredsFile          string
	// TLS, when set, connects with TLS (CA, client certificate and key).
	TLS *bus.TLSConfig
	// Replicas is the number of JetStream replicas of the event stream and
	// the lease bucket (default 1; 3 on a fault-tolerant cluster). More
	// than one needs a NATS cluster with that many JetStream servers; the
	// server refuses it otherwise.
	Replicas int
	// NodeID names this node in the session leases and its forwarded
	// commands' subject; empty picks a random id. It must be a NATS
	// subject token.
	NodeID string
	// LeaseTTL is how long a session lease lives without renewal (see
	// actors.LeaseConfig.TTL); zero means actors.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Observer sees the runtime's work (telemetry.New makes one); nil:
	// nothing is observed, at no cost.
	Observer Observer
}

// ErrBadConfig is returned by Start for an invalid Config.
var ErrBadConfig = errors.New("weft: bad config")

// external returns the NATS URLs of an external cluster, none for the
// embedded server, and checks the cluster fields.
func (cfg *Config) external() ([]string, error) {
	var urls []string
	if cfg.NATSURL != "" {
		urls = append(urls, cfg.NATSURL)
	}
	for _, u := range cfg.NATSURLs {
		if u == "" {
			return nil, fmt.Errorf("%w: empty URL in NATSURLs", ErrBadConfig)
		}
		urls = append(urls, u)
	}
	if cfg.Replicas < 0 || cfg.Replicas > 5 {
		return nil, fmt.Errorf("%w: Replicas %d: must be 1 to 5", ErrBadConfig, cfg.Replicas)
	}
	if cfg.LeaseTTL < 0 {
		return nil, fmt.Errorf("%w: negative LeaseTTL", ErrBadConfig)
	}
	if cfg.WorkerQueueWait < 0 {
		return nil, fmt.Errorf("%w: negative WorkerQueueWait", ErrBadConfig)
	}
	if len(urls) == 0 {
		set := []struct {
			name string
			on   bool
		}{
			{"NATSUser", cfg.NATSUser != ""}, {"NATSPassword", cfg.NATSPassword != ""}, {"NATSToken", cfg.NATSToken != ""},
			{"NATSNKeySeedFile", cfg.NATSNKeySeedFile != ""}, {"NATSCredsFile", cfg.NATSCredsFile != ""},
			{"TLS", cfg.TLS != nil}, {"Replicas", cfg.Replicas > 1}, {"NodeID", cfg.NodeID != ""}, {"LeaseTTL", cfg.LeaseTTL != 0},
		}
		for _, f := range set {
			if f.on {
				return nil, fmt.Errorf("%w: %s needs an external NATS (NATSURL or NATSURLs)", ErrBadConfig, f.name)
			}
		}
	}
	return urls, nil
}

// connectOptions returns the bus.Connect options of cfg's credentials and
// TLS.
func (cfg *Config) connectOptions() []bus.ConnectOption {
	var opts []bus.ConnectOption
	if cfg.NodeID != "" {
		opts = append(opts, bus.WithName("weft-"+cfg.NodeID))
	}
	if cfg.NATSUser != "" || cfg.NATSPassword != "" {
		opts = append(opts, bus.WithUserPassword(cfg.NATSUser, cfg.NATSPassword))
	}
	if cfg.NATSToken != "" {
		opts = append(opts, bus.WithToken(cfg.NATSToken))
	}
	if cfg.NATSNKeySeedFile != "" {
		opts = append(opts, bus.WithNKeySeedFile(cfg.NATSNKeySeedFile))
	}
	if cfg.NATSCredsFile != "" {
		opts = append(opts, bus.WithCredsFile(cfg.NATSCredsFile))
	}
	if cfg.TLS != nil {
		opts = append(opts, bus.WithTLS(*cfg.TLS))
	}
	return opts
}

// Runtime is a running weft node: the NATS connection (to an embedded or
// external server), the event store and the actors. Create it with Start,
// register agents with NewAgent, then call Recover once to carry on runs a
// previous process left running; a node of a cluster then runs
// WatchTakeovers to carry on the runs of nodes that die. Close stops it.
type Runtime struct {
	cfg    Config
	server *bus.Server
	conn   *nats.Conn
	store  events.Store
	owns   bool // the runtime created store and closes it
	host   *actors.Host
	subj   bus.Subjects
	tmp    string         // a temporary JetStream directory, removed on Close
	lock   *DataDirLock   // the lock of Config.DataDir, released on Close
	leases *actors.Leases // nil on the embedded server
	guard  *bus.JSGuard   // the JetStream API guard on external NATS
	// closeOnce runs Close once. Close keeps the fields set: sessions and
	// watchers may still use them concurrently, and get ErrClosed.
	closeOnce sync.Once
	closeErr  error
	// sub delivers the ends of sub-runs (subrun.go), from the first
	// agent tool on.
	sub     atomic.Pointer[subruns]
	subOnce sync.Once
}

func tempDir() (string, error) {
	d, err := os.MkdirTemp("", "weft-")
	if err != nil {
		return "", fmt.Errorf("weft: temporary directory: %w", err)
	}
	return d, nil
}

// Start starts a runtime:
//   - with NATSURL: connect to that NATS; the event log is its JetStream
//     (unless Store is set);
//   - else: start an embedded nats-server whose JetStream directory is
//     DataDir/nats (a temporary directory when DataDir is empty, which
//     is only allowed together with Store), connected in-process.
func Start(ctx context.Context, cfg Config) (*Runtime, error) {
	rt := &Runtime{cfg: cfg, subj: cfg.Subjects}
	if rt.subj.Root() == "" {
		rt.subj = bus.Default
	}
	urls, err := cfg.external()
	if err != nil {
		return nil, err
	}
	switch {
	case len(urls) > 0:
		rt.conn, err = bus.Connect(ctx, urls, cfg.connectOptions()...)
		if err != nil {
			return nil, fmt.Errorf("weft: connect: %w", err)
		}
		// The lesser roles' consumer and pool-stream requests reach the
		// JetStream API through a guard of the nodes (README, "Security
		// model"); the embedded server runs its own.
		if rt.guard, err = bus.ServeJSGuard(rt.conn, bus.DefaultLayout()); err != nil {
			rt.conn.Close()
			return nil, fmt.Errorf("weft: %w", err)
		}
	case cfg.DataDir != "" || cfg.Store != nil:
		dir := cfg.DataDir
		if dir != "" {
			if rt.lock, err = LockDataDir(dir); err != nil {
				return nil, err
			}
		}
		if dir == "" {
			dir, err = tempDir()
			if err != nil {
				return nil, err
			}
			rt.tmp = dir
		}
		rt.server, err = bus.StartServer(bus.ServerConfig{StoreDir: filepath.Join(dir, "nats"), Sync: cfg.Sync, Logger: cfg.Logger})
		if err != nil {
			_ = rt.lock.Release()
			return nil, fmt.Errorf("weft: start embedded nats-server: %w", err)
		}
		rt.conn, err = rt.server.Connect()
		if err != nil {
			rt.server.Shutdown()
			_ = rt.lock.Release()
			return nil, fmt.Errorf("weft: connect in-process: %w", err)
		}
	default:
		return nil, fmt.Errorf("%w: Config needs a DataDir, a NATSURL or a Store", ErrBadConfig)
	}
	rt.store = cfg.Store
	if rt.store == nil {
		keys := cfg.ChainKeys
		if keys == nil && cfg.DataDir != "" {
			if keys, err = events.LoadOrCreateChainKeys(cfg.DataDir); err != nil {
				rt.closeConn()
				return nil, fmt.Errorf("weft: the chain keys of %s: %w", cfg.DataDir, err)
			}
		}
		opts := []jetstream.Option{jetstream.WithSubjects(rt.subj)}
		if keys != nil {
			opts = append(opts, jetstream.WithChainKeys(keys))
		}
		if cfg.Replicas > 1 {
			opts = append(opts, jetstream.WithReplicas(cfg.Replicas))
		}
		rt.store, err = jetstream.New(ctx, rt.conn, opts...)
		if err != nil {
			rt.closeConn()
			return nil, fmt.Errorf("weft: open the event log: %w", err)
		}
		rt.owns = true
	}
	// Whatever the store, the host publishes the live copy of every event
	// it appends, private surfaces redacted, on the event subjects (the
	// JetStream store stores whole events through the log's ingest
	// subjects, which no core subscriber of weft.evt.> receives). The
	// JetStream store's atomic multi-event appends cost milliseconds on a
	// single-replica file stream: the session actors split the appends
	// where a partial one is harmless (see the actors package doc,
	// "Appends").
	var leases *actors.Leases
	if len(urls) > 0 {
		// A node of a cluster: other processes may drive the same
		// sessions, so this one drives only those it leases.
		leases, err = actors.NewLeases(ctx, rt.conn, actors.LeaseConfig{NodeID: cfg.NodeID, TTL: cfg.LeaseTTL, Replicas: cfg.Replicas})
		if err != nil {
			rt.Close()
			return nil, fmt.Errorf("weft: %w", err)
		}
	}
	rt.leases = leases
	var interest func([]byte) bool
	if rt.server != nil {
		// The embedded server knows who listens: no live copy is built
		// for an event subject without a subscriber.
		if interest, err = rt.server.Interest(rt.conn); err != nil {
			rt.Close()
			return nil, fmt.Errorf("weft: %w", err)
		}
	}
	rt.host, err = actors.NewHost(actors.HostConfig{Conn: rt.conn, Store: rt.store, Subjects: rt.subj,
		PublishEvents: true, Interest: interest, Logger: cfg.Logger, Leases: leases, WorkerQueueWait: cfg.WorkerQueueWait,
		MaxPayloadBytes: cfg.MaxPayloadBytes, SessionIdle: cfg.SessionIdle, Observer: hostObserver(cfg.Observer)})
	if err != nil {
		rt.Close()
		return nil, fmt.Errorf("weft: %w", err)
	}
	return rt, nil
}

// ErrSessionDamaged matches the error Recover returns, next to the ids of
// the sessions it carried on, when some running sessions are damaged (their
// streams hold poison): an *actors.DamagedError listing them.
var ErrSessionDamaged = actors.ErrSessionDamaged

// Recover carries on the runs a previous process left running (their
// sessions rebuild from their events; see the actors package for the
// rules). Register every agent with NewAgent first. It returns the ids of
// the sessions it restarted; waiting runs need no recovery. A damaged
// session does not stop it: it logs it (Config.Logger), carries the others
// on and returns their ids with an error matching ErrSessionDamaged.
//
// It reads the whole log once. With agent tools registered, the same read
// feeds the delivery of the ends of sub-runs a dead process left
// undelivered and the cancelling of orphans (past damaged sessions too:
// they leave the others' sub-runs alone).
func (rt *Runtime) Recover(ctx context.Context) ([]string, error) {
	return rt.RecoverWith(ctx, nil)
}

// RecoverWith is Recover, and it shows visit (when not nil) every event of
// its one read of the whole log, in log order, before it carries any
// session on: a caller that needs the whole log at start-up (a count of
// the waiting sessions, say) folds it from there instead of reading the
// log again. visit sees only the events the store decodes as events
// (poison is logged, not shown); it runs on the caller's goroutine and
// must not block. See actors.Host.RecoverWith.
func (rt *Runtime) RecoverWith(ctx context.Context, visit func(events.Event)) ([]string, error) {
	var scan *subrunScan
	if rt.sub.Load() != nil {
		// Agent tools are registered (NewAgent comes first).
		scan = newSubrunScan(rt.host.Logger())
	}
	ids, err := rt.host.RecoverWith(ctx, func(ev events.Event) {
		if scan != nil {
			scan.observe(ev)
		}
		if visit != nil {
			visit(ev)
		}
	})
	if err != nil && !errors.Is(err, ErrSessionDamaged) {
		return ids, err
	}
	if scan != nil {
		rt.sub.Load().recoverScan(ctx, scan)
	}
	return ids, err
}

// WatchTakeovers makes a node of a cluster take over the running sessions
// of the nodes that stop driving them (they died, paused past the lease
// TTL, or stopped cleanly), as their leases end: it reads only the
// session's stream, never the whole log (see actors.Host.WatchLeases). It
// blocks until ctx ends or the runtime closes (then it returns nil); run
// it in a goroutine after Recover. taken, which may be nil, is called with
// each session this node takes over, one call at a time; it must not
// block. On the embedded server (a single node) it returns an error that
// matches ErrNoLeases at once.
func (rt *Runtime) WatchTakeovers(ctx context.Context, taken func(sessionID string)) error {
	select {
	case <-rt.host.Done():
		return fmt.Errorf("weft: %w", ErrClosed)
	default:
	}
	if err := rt.host.WatchLeases(ctx, taken); err != nil {
		return fmt.Errorf("weft: %w", err)
	}
	return nil
}

// NodeID returns the node's id in the session leases, "" on the embedded
// server (a single node, which leases nothing).
func (rt *Runtime) NodeID() string {
	if rt.leases == nil {
		return ""
	}
	return rt.leases.Node()
}

// SessionOwner returns the node holding the lease of session id ("" when
// none does, or on the embedded server).
func (rt *Runtime) SessionOwner(ctx context.Context, id string) (string, error) {
	if rt.leases == nil {
		return "", nil
	}
	return rt.leases.Owner(ctx, id)
}

// Conn returns the runtime's NATS connection (for subscribing to events).
func (rt *Runtime) Conn() *nats.Conn { return rt.conn }

// Store returns the runtime's event store.
func (rt *Runtime) Store() events.Store { return rt.store }

// Subjects returns the runtime's subject scheme.
func (rt *Runtime) Subjects() bus.Subjects { return rt.subj }

// Close stops the actors (cancelling running tools), then closes the store
// the runtime opened, the connection and the embedded server. It is
// idempotent.
func (rt *Runtime) Close() error {
	rt.closeOnce.Do(func() {
		if rt.host != nil {
			_ = rt.host.Close()
		}
		if rt.owns && rt.store != nil {
			rt.closeErr = rt.store.Close()
		}
		rt.closeConn()
	})
	return rt.closeErr
}

func (rt *Runtime) closeConn() {
	if rt.guard != nil {
		_ = rt.guard.Close()
	}
	if rt.conn != nil {
		rt.conn.Close()
	}
	if rt.server != nil {
		rt.server.Shutdown()
	}
	_ = rt.lock.Release() // after the server stopped writing the directory
	if rt.tmp != "" {
		_ = os.RemoveAll(rt.tmp)
		rt.tmp = ""
	}
}
