package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// nodeConfig says how to start a node.
type nodeConfig struct {
	// dataDir holds the embedded server's event log (dataDir/nats); empty
	// means a temporary directory removed when the node stops.
	dataDir string
	// natsURL runs the node on an external NATS instead of embedding a
	// server (dataDir and listen are then unused).
	natsURL string
	// listen is the host:port the embedded server accepts other
	// processes' connections on; empty opens no port. A listening server
	// admits only the role credentials of dataDir/credentials.
	listen string
	// listenTLS makes the listener require TLS with this certificate.
	listenTLS *bus.ServerTLS
	// insecureListen accepts a non-loopback listen address without TLS.
	insecureListen bool
	// cluster is how a node on external NATS joins the cluster (its
	// fields are the facade's Config fields of the same names).
	cluster clusterConfig
	// remoteTools gives the demo agent the demo tools served by remote
	// tool workers (weft worker --tools demo) instead of its own.
	remoteTools bool
	// obs is the node's logger and telemetry (serve_observe.go); nil:
	// none.
	obs *observe
	// agentsFile declares agents the node hosts besides the demo agent
	// (weft serve --agents FILE; see package agentspec).
	agentsFile string
	// store, when set, is the event log in place of the embedded
	// server's JetStream, on a node that listens on no port: the tests
	// count what start-up reads of it.
	store events.Store
}

// remoteToolsWait bounds how long a node with remote tools waits for a
// worker to describe them at start.
const remoteToolsWait = 30 * time.Second

// clusterConfig is the cluster part of weft.Config: more seed URLs,
// authentication, TLS, replicas, the node's id and the lease TTL.
type clusterConfig struct {
	user, password, token string
	nkeySeedFile          string
	credsFile             string
	tls                   *bus.TLSConfig
	replicas              int
	nodeID                string
	leaseTTL              time.Duration
	// chainKeysFile is the node's secret chain keyring (see
	// events.ChainKeysFile); empty writes unkeyed events.
	chainKeysFile string
}

// runtimeConfig returns the facade's Config of a node on the external NATS
// at urls (the first one is NATSURL, the others NATSURLs).
func (c clusterConfig) runtimeConfig(urls []string) weft.Config {
	cfg := weft.Config{
		NATSUser: c.user, NATSPassword: c.password, NATSToken: c.token,
		NATSNKeySeedFile: c.nkeySeedFile, NATSCredsFile: c.credsFile, TLS: c.tls,
		Replicas: c.replicas, NodeID: c.nodeID, LeaseTTL: c.leaseTTL,
	}
	if len(urls) > 0 {
		cfg.NATSURL, cfg.NATSURLs = urls[0], urls[1:]
	}
	return cfg
}

// node is a running weft node with the demo agent registered: a runtime on
// an embedded nats-server (listening or not) or on an external NATS.
type node struct {
	rt     *weft.Runtime
	server *bus.Server // the embedded server when it listens; nil otherwise
	// lock is the data directory's lock when server is set (the runtime
	// holds it otherwise).
	lock  *weft.DataDirLock
	agent *weft.Agent // the demo agent
	// url is what other processes connect to ("" when nothing listens);
	// dataDir the data directory of an embedded server ("" on external
	// NATS); tmp is set when dataDir is temporary.
	url     string
	dataDir string
	tmp     bool
	// recovered are the sessions Recover carried on; damaged those it
	// could not (their streams hold poison).
	recovered []string
	damaged   []actors.DamagedSession
	// waiting are the sessions whose runs wait for a decision at start.
	waiting []string
	// credsDir holds the listening server's role credentials.
	credsDir string
	// specs and hosted are the agents of nodeConfig.agentsFile; earlier
	// the agents of the file before each reload, kept for their runs.
	specs   *agentspec.File
	hosted  *agentspec.Hosted
	earlier []*agentspec.Hosted
}

// apiAgents are the agents the HTTP API serves: the demo agent, then the
// agents of the spec file (its latest reload's).
func (n *node) apiAgents() []*weft.Agent {
	agents := []*weft.Agent{n.agent}
	if n.hosted != nil {
		agents = append(agents, n.hosted.Agents...)
	}
	return agents
}

// startNode starts a node, registers the demo agent and recovers the runs
// a previous process left running. The caller stops it with close.
func startNode(ctx context.Context, cfg nodeConfig) (_ *node, err error) {
	n := &node{}
	defer func() {
		if err != nil {
			_ = n.close()
		}
	}()
	switch {
	case cfg.natsURL != "":
		n.url = cfg.natsURL
		rcfg := cfg.cluster.runtimeConfig(splitURLs(cfg.natsURL))
		if f := cfg.cluster.chainKeysFile; f != "" {
			if rcfg.ChainKeys, err = events.ReadChainKeys(f); err != nil {
				return nil, err
			}
		}
		if n.rt, err = weft.Start(ctx, cfg.observed(rcfg)); err != nil {
			return nil, fmt.Errorf("start a node on %s: %w", cfg.natsURL, err)
		}
	default:
		n.dataDir = cfg.dataDir
		if n.dataDir == "" {
			if n.dataDir, err = os.MkdirTemp("", "weft-node-"); err != nil {
				return nil, fmt.Errorf("create a temporary data directory: %w", err)
			}
			n.tmp = true
		} else if err := os.MkdirAll(n.dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("create the data directory: %w", err)
		}
		if cfg.listen == "" {
			// No port: the runtime embeds the server, connected in-process.
			if n.rt, err = weft.Start(ctx, cfg.observed(weft.Config{DataDir: n.dataDir, Store: cfg.store})); err != nil {
				return nil, fmt.Errorf("start a node on %s: %w", n.dataDir, err)
			}
			break
		}
		// A listening server is started here (the runtime's embedded
		// default opens no port) and the runtime connects to it by URL,
		// as the node role; the node, not the runtime, then holds the
		// directory's lock. Other processes need a role's credentials,
		// generated in the data directory on first start.
		if err := checkListen(cfg.listen, cfg.listenTLS, cfg.insecureListen); err != nil {
			return nil, err
		}
		if n.lock, err = weft.LockDataDir(n.dataDir); err != nil {
			return nil, err
		}
		creds, err := bus.LoadOrCreateCredentials(filepath.Join(n.dataDir, bus.CredentialsDir))
		if err != nil {
			return nil, fmt.Errorf("the embedded server's credentials: %w", err)
		}
		n.credsDir = creds.Dir()
		n.server, err = bus.StartServer(bus.ServerConfig{StoreDir: filepath.Join(n.dataDir, "nats"), Listen: cfg.listen,
			Credentials: creds, TLS: cfg.listenTLS, InsecureListen: cfg.insecureListen})
		if err != nil {
			return nil, fmt.Errorf("start the embedded nats-server on %s: %w", cfg.listen, err)
		}
		n.url = n.server.ClientURL()
		// A runtime on a URL is a node of a cluster (other processes
		// may join it on this server): its id is the data directory's,
		// so that a restart is the same node (see dataDirNodeID).
		var id string
		if id, err = dataDirNodeID(n.dataDir); err != nil {
			return nil, err
		}
		// The data directory's chain keys, as the runtime loads them
		// on a DataDir.
		var keys *events.ChainKeys
		if keys, err = events.LoadOrCreateChainKeys(n.dataDir); err != nil {
			return nil, err
		}
		rcfg := weft.Config{NATSURL: n.url, NodeID: id, ChainKeys: keys, NATSNKeySeedFile: creds.SeedFile(bus.RoleNode)}
		if cfg.listenTLS != nil {
			rcfg.TLS = &bus.TLSConfig{CAFile: cfg.listenTLS.CertFile}
		}
		if n.rt, err = weft.Start(ctx, cfg.observed(rcfg)); err != nil {
			return nil, fmt.Errorf("start a node on %s: %w", n.url, err)
		}
	}
	acfg, err := demoAgentConfig()
	if err != nil {
		return nil, fmt.Errorf("build the demo agent's tools: %w", err)
	}
	if cfg.remoteTools {
		names := make([]string, len(acfg.Tools))
		for i, t := range acfg.Tools {
			names[i] = t.Definition().Name
		}
		dctx, cancel := context.WithTimeout(ctx, remoteToolsWait)
		ts, err := n.rt.RemoteTools(dctx, names...)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("the demo tools from the workers (is weft worker --tools demo running?): %w", err)
		}
		acfg.Tools, acfg.Toolsets = nil, append(acfg.Toolsets, ts)
	}
	if n.agent, err = n.rt.NewAgent(demoAgent, acfg); err != nil {
		return nil, err
	}
	if cfg.agentsFile != "" {
		// Before Recover: a restarted node carries on its agents' sessions.
		if n.specs, n.hosted, err = registerAgents(ctx, n.rt, cfg.agentsFile, nil); err != nil {
			return nil, err
		}
	}
	// The HITL queue folds from Recover's read of the whole log: start-up
	// reads the log once.
	q := projections.NewQueue()
	hitl := projections.NewRunner(n.rt.Store(), []projections.Projection{q})
	n.recovered, err = n.rt.RecoverWith(ctx, hitl.Apply)
	var damaged *actors.DamagedError
	if errors.As(err, &damaged) {
		n.damaged, err = damaged.Sessions, nil // reported, not fatal
	}
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	if cfg.obs != nil {
		logQuarantined(cfg.obs.log, hitl.Poison())
	}
	n.waiting = waitingSessions(q)
	return n, nil
}

// logQuarantined logs the events the HITL queue's fold quarantined at
// start-up: a waiting session whose event it refused is missing from the
// sessions the node reports waiting.
func logQuarantined(log *slog.Logger, poison []*events.PoisonError) {
	for _, p := range poison {
		log.Error("hitl queue: an event is quarantined, its session may be missing from the waiting ones",
			"session", p.SessionID(), "stream", p.Stream, "position", p.Position, "type", p.Type, "err", p.Err)
	}
}

// waitingSessions returns the sessions whose runs wait for a decision in
// q, the HITL queue of the log as Recover read it (before it carried any
// session on): they need no recovery, a decision resumes them.
func waitingSessions(q *projections.Queue) []string {
	ids := []string{}
	for _, it := range q.Items() {
		if !slices.Contains(ids, it.SessionID) {
			ids = append(ids, it.SessionID)
		}
	}
	return ids
}

// checkListen refuses a listen address other machines can reach when the
// server has no TLS, unless insecure accepts the risk; the error names the
// flags that fix it.
func checkListen(listen string, tls *bus.ServerTLS, insecure bool) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || tls != nil || insecure || bus.IsLoopback(host) {
		return nil // a bad address is reported by the server
	}
	return fmt.Errorf("%w: --listen %s accepts connections from other machines, in clear text: serve TLS (--listen-tls-cert FILE --listen-tls-key FILE) or accept the risk with --insecure-listen", bus.ErrInsecureListen, listen)
}

// splitURLs splits a comma-separated list of URLs (spaces around the
// commas allowed).
func splitURLs(list string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		out = append(out, strings.TrimSpace(u))
	}
	return out
}

// close stops the runtime, then the embedded server, then removes a
// temporary data directory.
func (n *node) close() error {
	var err error
	if n.rt != nil {
		if cerr := n.rt.Close(); cerr != nil {
			err = fmt.Errorf("close the runtime: %w", cerr)
		}
		n.rt = nil
	}
	if n.hosted != nil {
		// The agents' MCP sessions and environment roots, after the
		// runtime that used them.
		for _, h := range append(n.earlier, n.hosted) {
			if cerr := h.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close the agents of the spec file: %w", cerr)
			}
		}
		n.hosted, n.earlier = nil, nil
	}
	if n.server != nil {
		n.server.Shutdown()
		n.server = nil
	}
	_ = n.lock.Release()
	if n.tmp {
		if rerr := os.RemoveAll(n.dataDir); rerr != nil && err == nil {
			err = fmt.Errorf("remove the data directory: %w", rerr)
		}
		n.tmp = false
	}
	return err
}

// startDemoRun starts the demo's run in a new session of the node's demo
// agent and returns once it waits for the deploy's approval.
func (n *node) startDemoRun(ctx context.Context) (*weft.Session, *weft.Result, error) {
	sess := n.agent.NewSession()
	res, err := sess.Run(ctx, demoPrompt)
	if err != nil {
		return nil, nil, fmt.Errorf("demo run: %w", err)
	}
	if res.Status != weft.StatusWaiting || len(res.Pending.Approvals) == 0 {
		return nil, nil, fmt.Errorf("demo run ended %s without asking for an approval", res.Status)
	}
	return sess, res, nil
}
