package weft

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// Config configures a Runtime. The zero value is not usable: set DataDir,
// NATSURL or Store.
type Config struct {
	// DataDir is the data directory of the embedded default: the embedded
	// nats-server keeps its JetStream file store (the event log) in
	// DataDir/nats. Restarting on the same directory recovers the log.
	DataDir string
	// NATSURL connects to an external NATS (cluster) instead of embedding
	// a server; the event log is its JetStream.
	NATSURL string
	// Store replaces the JetStream event log (memstore for tests and
	// benchmarks). Messaging still uses NATS: the external one of NATSURL,
	// or an embedded nats-server (in a temporary directory, removed on
	// Close, when DataDir is empty).
	Store events.Store
	// Subjects is the subject scheme; zero means bus.Default ("weft").
	Subjects bus.Subjects
	// Sync is the fsync policy of the embedded server.
	Sync bus.SyncPolicy
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Runtime is a running weft node: the NATS connection (to an embedded or
// external server), the event store and the actors. Create it with Start,
// register agents with NewAgent, then call Recover once to carry on runs a
// previous process left running. Close stops it.
type Runtime struct {
	cfg    Config
	server *bus.Server
	conn   *nats.Conn
	store  events.Store
	owns   bool // the runtime created store and closes it
	host   *actors.Host
	subj   bus.Subjects
	tmp    string // a temporary JetStream directory, removed on Close
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
	var err error
	switch {
	case cfg.NATSURL != "":
		rt.conn, err = bus.Connect(ctx, []string{cfg.NATSURL})
		if err != nil {
			return nil, fmt.Errorf("weft: connect: %w", err)
		}
	case cfg.DataDir != "" || cfg.Store != nil:
		dir := cfg.DataDir
		if dir == "" {
			dir, err = tempDir()
			if err != nil {
				return nil, err
			}
			rt.tmp = dir
		}
		rt.server, err = bus.StartServer(bus.ServerConfig{StoreDir: filepath.Join(dir, "nats"), Sync: cfg.Sync, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("weft: start embedded nats-server: %w", err)
		}
		rt.conn, err = rt.server.Connect()
		if err != nil {
			rt.server.Shutdown()
			return nil, fmt.Errorf("weft: connect in-process: %w", err)
		}
	default:
		return nil, errors.New("weft: Config needs a DataDir, a NATSURL or a Store")
	}
	rt.store = cfg.Store
	if rt.store == nil {
		rt.store, err = jetstream.New(ctx, rt.conn, jetstream.WithSubjects(rt.subj))
		if err != nil {
			rt.closeConn()
			return nil, fmt.Errorf("weft: open the event log: %w", err)
		}
		rt.owns = true
	}
	// The JetStream store publishes the events it stores, and its atomic
	// multi-event appends cost milliseconds on a single-replica file
	// stream: the session actors split the appends where a partial one is
	// harmless (see the actors package doc, "Appends").
	rt.host, err = actors.NewHost(actors.HostConfig{Conn: rt.conn, Store: rt.store, Subjects: rt.subj,
		PublishEvents: cfg.Store != nil, SplitAppends: cfg.Store == nil, Logger: cfg.Logger})
	if err != nil {
		rt.Close()
		return nil, fmt.Errorf("weft: %w", err)
	}
	return rt, nil
}

// Recover carries on the runs a previous process left running (their
// sessions rebuild from their events; see the actors package for the
// rules). Register every agent with NewAgent first. It returns the ids of
// the sessions it restarted; waiting runs need no recovery.
func (rt *Runtime) Recover(ctx context.Context) ([]string, error) {
	return rt.host.Recover(ctx)
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
	if rt.host != nil {
		_ = rt.host.Close()
		rt.host = nil
	}
	var err error
	if rt.owns && rt.store != nil {
		err = rt.store.Close()
		rt.store = nil
	}
	rt.closeConn()
	return err
}

func (rt *Runtime) closeConn() {
	if rt.conn != nil {
		rt.conn.Close()
		rt.conn = nil
	}
	if rt.server != nil {
		rt.server.Shutdown()
		rt.server = nil
	}
	if rt.tmp != "" {
		_ = os.RemoveAll(rt.tmp)
		rt.tmp = ""
	}
}
