package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// defaultListen is where weft serve accepts other weft processes.
const defaultListen = "127.0.0.1:4222"

// serveOptions are the flags of weft serve.
type serveOptions struct {
	node nodeConfig
	demo bool
	json bool
	http *httpFlags
	obs  *observeFlags
}

// runServe runs a node until ctx ends (the CLI's SIGINT/SIGTERM).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "[--data DIR | --nats URL] [--listen HOST:PORT [--listen-tls-cert FILE --listen-tls-key FILE | --insecure-listen]] [--demo] [--json] [--http HOST:PORT [--http-tokens FILE]]", `
Runs a weft node with the demo agent registered: on the embedded default
(nats-server + JetStream, the event log in DIR/nats, listening on a loopback
port so that other weft commands can connect) or on an external NATS. It
recovers the runs a previous process left running and serves commands until
interrupted (SIGINT or SIGTERM), then shuts down cleanly. On --nats it also
takes over the running sessions of other nodes as their leases end (the node
died, or stopped): it notes each on stderr.

The embedded server admits only the role credentials it generates in
DIR/credentials on first start (an nkey seed per role, mode 0600: node,
operator, approver, reader, worker); other weft commands use them with
--creds-dir DIR/credentials. It refuses a --listen address other machines
can reach unless it serves TLS (--listen-tls-cert, --listen-tls-key) or
--insecure-listen accepts the risk.

With --demo it also starts the demo run and leaves it waiting for an
approval: decide it from a second terminal with weft approve.`, stderr)
	var o serveOptions
	fs.StringVar(&o.node.dataDir, "data", "", "keep the event log (and the node's id, DIR/node-id) in `DIR` (default: a temporary directory, removed at exit)")
	fs.StringVar(&o.node.natsURL, "nats", "", "run on the external NATS at `URL` instead of an embedded server (a comma-separated list: the seed URLs of a cluster)")
	fs.BoolVar(&o.node.remoteTools, "remote-tools", false, "with --nats: the demo agent calls the demo tools served by remote tool workers (weft worker --tools demo), waiting up to 30s at start for one to describe them")
	c := &o.node.cluster
	fs.StringVar(&c.nodeID, "node-id", "", "with --nats: this node's `ID` in the session leases (default: a random one)")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", 0, "with --nats: how long a session lease lives without renewal, the same on every node (default 10s); a survivor takes over the running sessions of a dead node a little after this")
	fs.IntVar(&c.replicas, "replicas", 0, "with --nats: JetStream replicas of the event log and the lease bucket, 1 to 5 (default 1)")
	fs.StringVar(&c.user, "user", "", "with --nats: authenticate as `NAME` (the password is read from $WEFT_NATS_PASSWORD)")
	fs.StringVar(&c.credsFile, "creds", "", "with --nats: authenticate with the NATS credentials `FILE` (JWT and nkey seed)")
	fs.StringVar(&c.nkeySeedFile, "nkey", "", "with --nats: authenticate with the nkey seed in `FILE`")
	fs.StringVar(&c.chainKeysFile, "chain-keys", os.Getenv(chainKeysEnv), "with --nats: key the event log's chain with the secret chain keyring `FILE` (mode 0600; default $WEFT_CHAIN_KEYS; without it the node writes unkeyed events)")
	var tlsCfg bus.TLSConfig
	fs.StringVar(&tlsCfg.CAFile, "tls-ca", "", "with --nats: connect with TLS, trusting the CA certificates in `FILE`")
	fs.StringVar(&tlsCfg.CertFile, "tls-cert", "", "with --nats: the client certificate `FILE` of TLS (with --tls-key)")
	fs.StringVar(&tlsCfg.KeyFile, "tls-key", "", "with --nats: the client key `FILE` of TLS (with --tls-cert)")
	fs.StringVar(&o.node.listen, "listen", defaultListen, "the `HOST:PORT` the embedded server accepts connections on (port -1: any free port)")
	var listenTLS bus.ServerTLS
	fs.StringVar(&listenTLS.CertFile, "listen-tls-cert", "", "the embedded server requires TLS with the certificate `FILE` (PEM; with --listen-tls-key); clients trust it with --tls-ca")
	fs.StringVar(&listenTLS.KeyFile, "listen-tls-key", "", "the key `FILE` of --listen-tls-cert")
	fs.BoolVar(&o.node.insecureListen, "insecure-listen", false, "accept a --listen address other machines can reach without TLS (credentials and events cross the network in clear text)")
	fs.BoolVar(&o.demo, "demo", false, "start the demo run and leave it waiting for approval")
	fs.StringVar(&o.node.agentsFile, "agents", "", "also host the agents declared in the spec `FILE` (YAML; see the README's \"Run your own agent\")")
	output := addOutputFlag(fs)
	o.http = addHTTPFlags(fs)
	o.obs = addObserveFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := output.check(); err != nil {
		return err
	}
	o.json = output.json()
	set := setFlags(fs)
	switch {
	case len(pos) > 0:
		return usageError(fs, "takes no arguments, got %q", pos)
	case set["nats"] && (set["data"] || set["listen"] || set["listen-tls-cert"] || set["listen-tls-key"] || set["insecure-listen"]):
		return usageError(fs, "--nats runs on an external NATS: --data, --listen, --listen-tls-* and --insecure-listen are for the embedded server")
	case (listenTLS.CertFile == "") != (listenTLS.KeyFile == ""):
		return usageError(fs, "--listen-tls-cert and --listen-tls-key go together")
	case set["nats"] && o.node.natsURL == "":
		return usageError(fs, "--nats needs a URL")
	case o.node.natsURL == "" && o.node.listen == "":
		return usageError(fs, "--listen needs HOST:PORT (other weft commands connect there)")
	case o.node.natsURL != "" && slices.Contains(splitURLs(o.node.natsURL), ""):
		return usageError(fs, "--nats %q has an empty URL in its list", o.node.natsURL)
	case c.leaseTTL < 0:
		return usageError(fs, "--lease-ttl must be positive, got %v", c.leaseTTL)
	case set["replicas"] && (c.replicas < 1 || c.replicas > 5):
		return usageError(fs, "--replicas must be 1 to 5, got %d", c.replicas)
	case (tlsCfg.CertFile == "") != (tlsCfg.KeyFile == ""):
		return usageError(fs, "--tls-cert and --tls-key go together")
	}
	for _, name := range clusterFlags {
		if set[name] && o.node.natsURL == "" {
			return usageError(fs, "--%s is for a node on an external NATS (--nats URL)", name)
		}
	}
	if err := o.http.check(); err != nil {
		return usageError(fs, "%v", err)
	}
	if err := o.obs.check(); err != nil {
		return usageError(fs, "%v", err)
	}
	if tlsCfg != (bus.TLSConfig{}) {
		c.tls = &tlsCfg
	}
	if listenTLS != (bus.ServerTLS{}) {
		o.node.listenTLS = &listenTLS
	}
	c.password = os.Getenv(passwordEnv)
	if c.user == "" {
		c.password = ""
	}
	if o.node.natsURL != "" {
		c.token = os.Getenv(tokenEnv)
	}
	return serve(ctx, o, stdout, stderr)
}

// clusterFlags are the flags of serve that need --nats.
var clusterFlags = []string{"remote-tools", "node-id", "lease-ttl", "replicas", "user", "creds", "nkey", "tls-ca", "tls-cert", "tls-key", "chain-keys"}

// The environment variables serve reads secrets from (secrets on a command
// line show in the process list).
const (
	passwordEnv = "WEFT_NATS_PASSWORD" // the password of --user
	tokenEnv    = "WEFT_NATS_TOKEN"    // a token to authenticate with
	// chainKeysEnv names the secret chain keyring file of a node on
	// external NATS, and of weft audit reading a log over --nats.
	chainKeysEnv = "WEFT_CHAIN_KEYS"
)

// serveReport is what serve --json prints once the node is ready.
type serveReport struct {
	URL     string `json:"url"`
	Node    string `json:"node,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
	// CredsDir holds the embedded server's role credentials (one nkey
	// seed file per role); other commands take it as --creds-dir.
	CredsDir string `json:"credentials_dir,omitempty"`
	// HTTP is the URL of the HTTP API (serve --http).
	HTTP      string   `json:"http,omitempty"`
	Agents    []string `json:"agents"`
	Recovered []string `json:"recovered"`
	// Waiting are the sessions whose runs wait for a decision at start.
	Waiting []string    `json:"waiting"`
	Demo    *demoReport `json:"demo,omitempty"`

	// Damaged are the running sessions Recover could not carry on: their
	// streams hold poison (session id → why).
	Damaged map[string]string `json:"damaged,omitempty"`
}

type demoReport struct {
	SessionID string             `json:"session_id"`
	RunID     string             `json:"run_id"`
	Pending   []weft.PendingItem `json:"pending"`
}

// serve starts the node, reports where it is, and serves until ctx ends.
func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) (err error) {
	if o.obs != nil {
		if o.node.obs, err = startObserve(ctx, o.obs, o.http != nil && o.http.addr != "", stderr); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer func() { _ = o.node.obs.close() }()
	}
	n, err := startNode(ctx, o.node)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	o.node.obs.attach(n.rt)
	defer func() {
		if cerr := n.close(); cerr != nil && err == nil {
			err = fmt.Errorf("serve: %w", cerr)
		}
	}()
	var mu sync.Mutex
	stdout = &lockedWriter{mu: &mu, w: stdout}
	rep := serveReport{URL: n.url, Node: n.rt.NodeID(), CredsDir: n.credsDir, Agents: []string{demoAgent}, Recovered: n.recovered, Waiting: n.waiting}
	if n.specs != nil {
		rep.Agents = append(rep.Agents, agentNames(n.specs)...)
	}
	if n.tmp {
		rep.DataDir = n.dataDir
	} else {
		rep.DataDir = o.node.dataDir
	}
	if rep.Recovered == nil {
		rep.Recovered = []string{}
	}
	for _, d := range n.damaged {
		if rep.Damaged == nil {
			rep.Damaged = map[string]string{}
		}
		rep.Damaged[d.ID] = d.Err.Error()
	}

	var reloader *agentReloader
	if o.node.agentsFile != "" {
		reloader = &agentReloader{n: n, path: o.node.agentsFile}
	}
	if o.http != nil && o.http.addr != "" {
		var reload func(context.Context) (any, error)
		if reloader != nil {
			reload = func(ctx context.Context) (any, error) { return reloader.reload(ctx) }
		}
		o.http.obs = o.node.obs
		hs, err := startHTTP(o.http, n.rt, n.apiAgents(), reload, stderr)
		if err != nil {
			return fmt.Errorf("serve: the HTTP API: %w", err)
		}
		defer func() {
			if cerr := hs.close(); cerr != nil && err == nil {
				err = fmt.Errorf("serve: the HTTP API: %w", cerr)
			}
		}()
		rep.HTTP = hs.url
		if reloader != nil {
			if err := reloader.setAPI(hs.api); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
		}
	}

	var watched sync.WaitGroup
	defer watched.Wait()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if o.demo {
		sess, res, err := n.startDemoRun(ctx)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		rep.Demo = &demoReport{SessionID: sess.ID(), RunID: res.RunID, Pending: res.Pending.Approvals}
		// Say when the run settles again (after weft approve). Live copies
		// are published after their append, so the copy of the run.waiting
		// the report already shows may still come: only later events are
		// reported.
		sub, ch, err := watchRun(n.rt, sess.ID())
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		st, err := sess.Status(ctx)
		if err != nil {
			_ = sub.Unsubscribe()
			return fmt.Errorf("serve: %w", err)
		}
		watched.Add(1)
		go func() {
			defer watched.Done()
			defer func() { _ = sub.Unsubscribe() }()
			reportSettled(ctx, ch, res.RunID, st.Version, o.json, stdout)
		}()
	}
	if reloader != nil {
		hup, stopHUP := notifySIGHUP()
		defer stopHUP()
		watched.Add(1)
		go func() {
			defer watched.Done()
			reloader.onSIGHUP(ctx, hup, stderr)
		}()
	}
	if o.node.natsURL != "" && o.node.cluster.chainKeysFile == "" {
		fmt.Fprintf(stderr, "weft serve: no --chain-keys (or $%s): this node writes unkeyed events, which weft audit verify refuses\n", chainKeysEnv)
	}
	if o.node.natsURL != "" {
		// A node of a cluster takes over the running sessions of a node
		// that dies (or stops) as their leases end, without waiting for a
		// command to arrive.
		watched.Add(1)
		go func() {
			defer watched.Done()
			watchTakeovers(ctx, n.rt, stderr)
		}()
	}
	if o.json {
		b, err := json.Marshal(rep)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printServeReport(stdout, o, n, rep)
	}
	<-ctx.Done()
	if !o.json {
		fmt.Fprintln(stdout, "weft serve: stopping")
	}
	return nil
}

// watchTakeovers runs rt.WatchTakeovers until ctx ends, noting on w each
// session this node takes over.
func watchTakeovers(ctx context.Context, rt *weft.Runtime, w io.Writer) {
	err := rt.WatchTakeovers(ctx, func(id string) {
		fmt.Fprintf(w, "weft serve: node %s drives session %s\n", rt.NodeID(), id)
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(w, "weft serve: watch the session leases: %v\n", err)
	}
}

func printServeReport(w io.Writer, o serveOptions, n *node, rep serveReport) {
	switch {
	case o.node.natsURL != "":
		fmt.Fprintf(w, "weft serve: node on the external NATS at %s\n", n.url)
	case n.tmp:
		fmt.Fprintf(w, "weft serve: node on the embedded nats-server, data in %s (temporary, removed at exit; keep it with --data DIR)\n", n.dataDir)
	default:
		fmt.Fprintf(w, "weft serve: node on the embedded nats-server, data in %s\n", n.dataDir)
	}
	if o.node.natsURL != "" {
		fmt.Fprintf(w, "connected: %s\n", n.url)
	} else {
		fmt.Fprintf(w, "listening: %s\n", n.url)
	}
	if rep.HTTP != "" {
		fmt.Fprintf(w, "http api:  %s\n", rep.HTTP)
	}
	if n.credsDir != "" {
		fmt.Fprintf(w, "credentials: %s (a seed per role: node, operator, approver, reader, worker; other commands take --creds-dir %s)\n", n.credsDir, n.credsDir)
	}
	fmt.Fprintf(w, "agents:    %s\n", demoAgent)
	if n.specs != nil {
		printAgents(w, n.specs)
	}
	fmt.Fprintf(w, "recovered: %d running session(s) carried on, %d waiting for a decision\n", len(rep.Recovered), len(rep.Waiting))
	for _, id := range slices.Sorted(maps.Keys(rep.Damaged)) {
		fmt.Fprintf(w, "damaged:   session %s, not carried on: %s\n", id, rep.Damaged[id])
	}
	if d := rep.Demo; d != nil {
		fmt.Fprintf(w, "\ndemo: session %s, run %s waits for approval:\n", d.SessionID, d.RunID)
		for _, p := range d.Pending {
			fmt.Fprintf(w, "  approval %s: %s %s", p.ID, p.Tool, compact(p.Arguments))
			if p.Reason != "" {
				fmt.Fprintf(w, " (%s)", p.Reason)
			}
			fmt.Fprintln(w)
		}
		nats := ""
		if n.url != defaultNATSURL {
			nats = " --nats " + n.url
		}
		if n.credsDir != "" {
			nats += " --creds-dir " + n.credsDir
		}
		fmt.Fprintf(w, "\nnext, in a second terminal:\n")
		fmt.Fprintf(w, "  weft approvals%s\n", nats)
		for _, p := range d.Pending {
			fmt.Fprintf(w, "  weft approve %s --by alice%s\n", p.ID, nats)
		}
		fmt.Fprintf(w, "  weft show %s%s\n", d.SessionID, nats)
		fmt.Fprintf(w, "  weft audit %s%s\n", d.SessionID, nats)
	}
	fmt.Fprintln(w, "\nserving until interrupted (Ctrl-C)")
}

// watchRun subscribes to the run.* events of session id.
func watchRun(rt *weft.Runtime, sessionID string) (*nats.Subscription, chan *nats.Msg, error) {
	subject, err := rt.Subjects().StreamEvents(events.SessionStream(sessionID))
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan *nats.Msg, 64)
	sub, err := rt.Conn().ChanSubscribe(subject, ch)
	if err != nil {
		return nil, nil, fmt.Errorf("subscribe to %s: %w", subject, err)
	}
	return sub, ch, nil
}

// reportSettled prints each time run settles after version after of its
// session, until ctx ends.
func reportSettled(ctx context.Context, ch <-chan *nats.Msg, runID string, after uint64, asJSON bool, w io.Writer) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-ch:
			ev, err := events.ParseEvent(m.Data)
			if err != nil || ev.RunID != runID || ev.Version <= after {
				continue
			}
			line := settledLine(ev)
			if line == "" {
				continue
			}
			if asJSON {
				fmt.Fprintf(w, "%s\n", m.Data)
			} else {
				fmt.Fprintf(w, "demo: run %s %s\n", runID, line)
			}
		}
	}
}

// settledLine describes an event that settles a run ("" for others).
func settledLine(ev events.Event) string {
	switch ev.Type {
	case events.TypeRunCompleted:
		d, err := events.DecodeAs[events.RunCompleted](ev)
		if err != nil {
			return "completed"
		}
		var text string
		if json.Unmarshal(d.Output, &text) == nil {
			return "completed: " + text
		}
		return "completed: " + compact(d.Output)
	case events.TypeRunFailed:
		d, err := events.DecodeAs[events.RunFailed](ev)
		if err != nil {
			return "failed"
		}
		return fmt.Sprintf("failed (%s): %s", d.Error.Kind, d.Error.Message)
	case events.TypeRunCancelled:
		return "cancelled"
	case events.TypeRunWaiting:
		return "waits again (weft approvals)"
	}
	return ""
}
