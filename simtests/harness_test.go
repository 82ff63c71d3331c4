package simtests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// testTimeout bounds each simulation test, processes included.
const testTimeout = 60 * time.Second

// leaseTTL is the lease TTL of the weft nodes: short, so that takeovers
// happen within the tests' budget.
const leaseTTL = time.Second

// bins holds the binaries built once per test run.
var bins struct {
	dir                   string
	weft, nats, simworker string
	err                   error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := func() int {
		if testing.Short() {
			return m.Run() // the tests skip themselves
		}
		dir, err := os.MkdirTemp("", "weft-simtests-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "simtests:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		bins.dir = dir
		bins.weft, bins.nats, bins.simworker = filepath.Join(dir, "weft"), filepath.Join(dir, "nats-server"), filepath.Join(dir, "simworker")
		bins.err = buildBinaries(bins.weft, bins.nats, bins.simworker)
		return m.Run()
	}()
	os.Exit(code)
}

// buildBinaries builds weft, nats-server (from the module cache: the
// nats-server module is a dependency of weft) and simworker.
func buildBinaries(weft, natsServer, simworker string) error {
	gobin := "go" // the go command on PATH, as the README's test command runs it
	for _, b := range []struct{ out, pkg string }{
		{weft, "github.com/weft-run/weft/cmd/weft"},
		{natsServer, "github.com/nats-io/nats-server/v2"},
		{simworker, "github.com/weft-run/weft/simtests/simworker"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		out, err := exec.CommandContext(ctx, gobin, "build", "-o", b.out, b.pkg).CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// harness is one test's processes, their logs and its deadline.
type harness struct {
	t   *testing.T
	ctx context.Context
	dir string
	// stalePing, when set, makes the NATS servers ping clients this often
	// and drop one that misses two pings (a stopped process).
	stalePing time.Duration
	// localTools, when set, starts the weft nodes without --remote-tools:
	// each node runs the demo tools of the runs it drives itself.
	localTools bool
	// pool, when set, makes the workers startWorker starts take their
	// calls from that worker pool (its stream on three replicas).
	pool string
	// httpAPI, when set, makes the weft nodes serve the HTTP API on a free
	// loopback port (serveReport.HTTP).
	httpAPI bool

	mu    sync.Mutex
	procs []*proc
}

// newHarness marks t parallel (each test has its own cluster, and the
// tests mostly wait: for leases, heartbeat deadlines and raft elections)
// and returns a harness bounded by testTimeout; at cleanup it kills and
// reaps every process and, if the test failed, prints their logs.
func newHarness(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("simulation tests start processes; skipped with -short")
	}
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	h := &harness{t: t, ctx: ctx, dir: t.TempDir()}
	t.Cleanup(func() {
		cancel()
		h.mu.Lock()
		procs := h.procs
		h.mu.Unlock()
		logs := map[string]bool{}
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				if logs[p.log] {
					continue
				}
				logs[p.log] = true
				b, _ := os.ReadFile(p.log)
				t.Logf("---- log of %s (%s) ----\n%s", p.name, p.log, b)
			}
		}
	})
	return h
}

// proc is a child process: its stdout lines are kept (and written to its
// log with stderr).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has been reaped

	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced when a line arrives
}

// start starts bin with args as name; the harness kills it at cleanup.
func (h *harness) start(name, bin string, args ...string) *proc {
	h.t.Helper()
	p, err := h.startProc(name, bin, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// startProc is start returning its error (for other goroutines than the
// test's). A restarted process appends to the same log.
func (h *harness) startProc(name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(h.dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = f
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{}), more: make(chan struct{})}
	fmt.Fprintf(f, "## %s %s\n", bin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	go func() {
		defer close(p.done)
		defer f.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintf(f, "[stdout] %s\n", line)
			p.mu.Lock()
			p.lines = append(p.lines, line)
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, out)
		err := cmd.Wait()
		fmt.Fprintf(f, "## exited: %v\n", err)
	}()
	return p, nil
}

// waitLine returns the first stdout line that match accepts.
func (p *proc) waitLine(ctx context.Context, match func(string) bool) (string, error) {
	seen := 0
	for {
		p.mu.Lock()
		lines, more := p.lines, p.more
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if match(lines[seen]) {
				return lines[seen], nil
			}
		}
		select {
		case <-more:
		case <-p.done:
			return "", fmt.Errorf("%s exited (see %s)", p.name, p.log)
		case <-ctx.Done():
			return "", fmt.Errorf("wait for a line of %s: %w", p.name, ctx.Err())
		}
	}
}

// signal sends sig to the process (if it still runs).
func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// kill sends SIGKILL (after SIGCONT, in case it is stopped) and reaps it.
func (p *proc) kill() {
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	<-p.done
}

// freePorts returns n distinct loopback ports that were free a moment
// ago. Every listener stays open until all n are picked: closed one by
// one, the kernel may hand the same port out twice.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// natsNode is one server of the NATS cluster.
type natsNode struct {
	name        string
	conf, store string
	port, route int
	p           *proc
}

func (n *natsNode) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// cluster is a three-node nats-server cluster with JetStream.
type cluster struct {
	h     *harness
	nodes []*natsNode
}

// urls returns the client URLs of every server.
func (c *cluster) urls() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.url()
	}
	return out
}

// clusterAttempts bounds the starts of a cluster whose servers exit at
// once: a port picked by freePorts may be taken by another process
// (another test's server or client) before the server binds it.
const clusterAttempts = 3

// startCluster starts three nats-servers routed to each other, each with
// its own config file and store directory, and waits until JetStream has
// a meta leader. A cluster one of whose servers exits while it starts (a
// port taken meanwhile) is killed and started again on fresh ports.
func (h *harness) startCluster() *cluster {
	h.t.Helper()
	for attempt := 1; ; attempt++ {
		c := &cluster{h: h}
		ports := freePorts(h.t, 6)
		for i := range 3 {
			n := &natsNode{name: fmt.Sprintf("nats%d", i+1), port: ports[2*i], route: ports[2*i+1]}
			n.store = filepath.Join(h.dir, fmt.Sprintf("try%d", attempt), n.name, "store")
			n.conf = filepath.Join(h.dir, fmt.Sprintf("try%d", attempt), n.name, "server.conf")
			c.nodes = append(c.nodes, n)
		}
		for _, n := range c.nodes {
			c.configure(n)
			c.startNode(n)
		}
		err := c.ready()
		if err == nil {
			return c
		}
		var exited serverExited
		if !errors.As(err, &exited) || attempt == clusterAttempts {
			h.t.Fatal(err)
		}
		h.t.Logf("starting the NATS cluster again (attempt %d): %v", attempt+1, err)
		for _, n := range c.nodes {
			n.p.kill()
		}
	}
}

// configure writes n's config file and creates its store directory.
func (c *cluster) configure(n *natsNode) {
	h := c.h
	var routes []string
	for _, o := range c.nodes {
		if o != n {
			routes = append(routes, fmt.Sprintf("%q", fmt.Sprintf("nats-route://127.0.0.1:%d", o.route)))
		}
	}
	ping := ""
	if h.stalePing > 0 {
		ping = fmt.Sprintf("ping_interval: %q\nping_max: 2\n", h.stalePing.String())
	}
	conf := fmt.Sprintf(`server_name: %q
listen: "127.0.0.1:%d"
%sjetstream {
  store_dir: %q
}
cluster {
  name: "weftsim"
  listen: "127.0.0.1:%d"
  routes: [%s]
}
`, n.name, n.port, ping, n.store, n.route, strings.Join(routes, ", "))
	if err := os.MkdirAll(n.store, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(n.conf, []byte(conf), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// serverExited is ready's error for a server that exited while it was
// waited for (its log says why: a port in use, a bad config).
type serverExited struct{ name, log string }

func (e serverExited) Error() string { return fmt.Sprintf("%s exited (see %s)", e.name, e.log) }

// startNode starts (or restarts) n on its config and store.
func (c *cluster) startNode(n *natsNode) {
	n.p = c.h.start(n.name, bins.nats, "-c", n.conf)
}

// restart kills server i and starts it again on the same store; it waits
// until the cluster has a JetStream meta leader again.
func (c *cluster) restart(i int) error {
	n := c.nodes[i]
	n.p.kill()
	p, err := c.h.startProc(n.name, bins.nats, "-c", n.conf)
	if err != nil {
		return err
	}
	n.p = p
	return c.ready()
}

// ready waits until every server accepts clients and JetStream answers
// on each (the cluster has a meta leader); it fails at once when a server
// exits (serverExited).
func (c *cluster) ready() error {
	for _, n := range c.nodes {
		err := retry(c.h.ctx, func(ctx context.Context) error {
			select {
			case <-n.p.done:
				return backoffStop{serverExited{name: n.name, log: n.p.log}}
			default:
			}
			nc, err := nats.Connect(n.url(), nats.Timeout(time.Second), nats.NoReconnect())
			if err != nil {
				return err
			}
			defer nc.Close()
			js, err := natsjs.New(nc)
			if err != nil {
				return err
			}
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err = js.AccountInfo(actx)
			return err
		})
		var stop backoffStop
		if errors.As(err, &stop) {
			return stop.err
		}
		if err != nil {
			return fmt.Errorf("%s: JetStream not ready: %w", n.name, err)
		}
	}
	// A meta leader may know fewer than three peers for a while: wait
	// until a stream of three replicas can be placed.
	return retry(c.h.ctx, func(ctx context.Context) error {
		nc, err := nats.Connect(strings.Join(c.urls(), ","), nats.Timeout(time.Second), nats.NoReconnect())
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := natsjs.New(nc)
		if err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		const probe = "SIMTESTS_PROBE"
		if _, err := js.CreateStream(sctx, natsjs.StreamConfig{Name: probe, Subjects: []string{"simtests.probe"}, Replicas: 3, Storage: natsjs.MemoryStorage}); err != nil {
			return fmt.Errorf("place a stream of three replicas: %w", err)
		}
		return js.DeleteStream(sctx, probe)
	})
}

// retry calls fn every 100 ms until it succeeds, returns a backoffStop or
// ctx ends.
func retry(ctx context.Context, fn func(context.Context) error) error {
	for {
		err := fn(ctx)
		var stop backoffStop
		if err == nil || errors.As(err, &stop) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serveReport is the part of weft serve --json's first line the tests use.
type serveReport struct {
	URL       string   `json:"url"`
	Node      string   `json:"node"`
	Agents    []string `json:"agents"`
	Recovered []string `json:"recovered"`
	CredsDir  string   `json:"credentials_dir"`
	// HTTP is the HTTP API's base URL (with h.httpAPI).
	HTTP string `json:"http"`
}

// weftNode is a weft serve process of the cluster.
type weftNode struct {
	id  string
	p   *proc
	rep serveReport
}

// startWeft starts weft serve as node id on the cluster (replicas 3, lease
// TTL leaseTTL, the demo tools served by the workers unless h.localTools)
// and waits for its report.
func (h *harness) startWeft(c *cluster, id string) *weftNode {
	h.t.Helper()
	args := []string{"serve", "--nats", strings.Join(c.urls(), ",")}
	if !h.localTools {
		args = append(args, "--remote-tools")
	}
	args = append(args, "--replicas", "3", "--lease-ttl", leaseTTL.String(), "--node-id", id, "--json")
	if h.httpAPI {
		args = append(args, "--http", "127.0.0.1:0")
	}
	p := h.start("weft-"+id, bins.weft, args...)
	line, err := p.waitLine(h.ctx, func(s string) bool { return strings.HasPrefix(s, "{") })
	if err != nil {
		h.t.Fatal(err)
	}
	w := &weftNode{id: id, p: p}
	if err := json.Unmarshal([]byte(line), &w.rep); err != nil {
		h.t.Fatalf("weft serve %s reported %q: %v", id, line, err)
	}
	if w.rep.Node != id {
		h.t.Fatalf("weft serve --node-id %s reported node %q", id, w.rep.Node)
	}
	return w
}

// startWorker starts weft worker --tools demo as id on the cluster (in
// worker pool h.pool if set) and waits until it serves.
func (h *harness) startWorker(c *cluster, id string) *proc {
	h.t.Helper()
	args := []string{"worker", "--nats", strings.Join(c.urls(), ","), "--tools", "demo", "--id", id}
	if h.pool != "" {
		args = append(args, "--pool", h.pool, "--queue-replicas", "3")
	}
	p := h.start("worker-"+id, bins.weft, args...)
	if _, err := p.waitLine(h.ctx, func(s string) bool { return strings.HasPrefix(s, "worker "+id+" serving") }); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// sim is a started simulation: the NATS cluster, the workers, the weft
// nodes by id and a client.
type sim struct {
	*harness
	nats    *cluster
	workers []*proc
	nodes   map[string]*weftNode
	c       *client
}

// simPool is the worker pool of the pooled simulation workers.
const simPool = "sim"

// workerOpts configures a simulation worker.
type workerOpts struct {
	// deploy and fetch are how long deploy and fetch_ticket last.
	deploy, fetch time.Duration
	// pool, when set, makes the worker take its calls from that worker
	// pool (its stream replicated on the three servers) instead of the
	// queue group.
	pool string
	// concurrency limits the calls the worker runs at once (0: the
	// worker's default).
	concurrency int
}

// startSimWorker starts simworker as id on the cluster, configured by o,
// writing its effect files in effects, and waits until it serves.
func (h *harness) startSimWorker(c *cluster, id, effects string, o workerOpts) *proc {
	h.t.Helper()
	args := []string{"--nats", strings.Join(c.urls(), ","), "--id", id, "--effects", effects,
		"--deploy-delay", o.deploy.String(), "--fetch-delay", o.fetch.String()}
	if o.pool != "" {
		args = append(args, "--pool", o.pool, "--queue-replicas", "3")
	}
	if o.concurrency > 0 {
		args = append(args, "--concurrency", fmt.Sprint(o.concurrency))
	}
	p := h.start("simworker-"+id, bins.simworker, args...)
	if _, err := p.waitLine(h.ctx, func(s string) bool { return s == "worker "+id+" serving" }); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// startAll starts the NATS cluster, two workers (weft worker), weft nodes
// a and b and a client.
func (h *harness) startAll() *sim {
	return h.startSim(nil)
}

// startSim is startAll with the workers that startWorkers starts (nil:
// two of weft worker).
func (h *harness) startSim(startWorkers func(*cluster) []*proc) *sim {
	h.t.Helper()
	nc := h.startCluster()
	s := &sim{harness: h, nats: nc}
	if startWorkers == nil {
		s.workers = []*proc{h.startWorker(nc, "w1"), h.startWorker(nc, "w2")}
	} else {
		s.workers = startWorkers(nc)
	}
	s.nodes = map[string]*weftNode{"a": h.startWeft(nc, "a"), "b": h.startWeft(nc, "b")}
	s.c = h.newClient(nc)
	return s
}

// other returns the id of the weft node that is not id.
func (s *sim) other(id string) string {
	if id == "a" {
		return "b"
	}
	return "a"
}
