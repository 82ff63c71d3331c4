package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

func init() {
	commands["worker"] = command{"serve tools to weft nodes from a NATS queue group until interrupted (--tools demo)", runWorker}
}

// workerToolsets are the tool sets weft worker can serve, by --tools name.
var workerToolsets = map[string]func() ([]toolsets.Tool, error){
	"demo": func() ([]toolsets.Tool, error) {
		cfg, err := demoAgentConfig()
		if err != nil {
			return nil, err
		}
		return cfg.Tools, nil
	},
}

// runWorker serves the tools of --tools to the nodes on --nats until ctx
// ends (SIGINT, SIGTERM).
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", "[--nats URL] [--tools demo] [--id ID] [--concurrency N] [--pool NAME [--queue-replicas N]] [--creds-dir DIR | --user NAME | --creds FILE | --nkey FILE] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]", `
Serves tools to weft nodes as a remote tool worker (docs/worker-protocol.md):
it answers the calls of its tools from the NATS queue group weft-workers, so
starting more workers adds throughput, until SIGINT or SIGTERM. Nodes offer
the tools to their agents with Runtime.RemoteTools. --tools demo serves the
tools of weft demo (lookup, fetch_ticket, deploy). With --pool, the worker
pulls its calls from the pool's JetStream work queue instead: a call goes to
a worker of the pool with a free slot, and waits while every one is busy.`, stderr)
	url := fs.String("nats", "nats://"+defaultListen, "the NATS `URL` of the weft nodes")
	set := fs.String("tools", "demo", "the `SET` of tools to serve: demo")
	id := fs.String("id", "", "the worker's `ID` in descriptions (default: a random one)")
	limit := fs.Int("concurrency", 0, "run at most `N` calls at once (0: no limit; 16 with --pool)")
	pool := fs.String("pool", "", "take calls from worker pool `NAME` (a JetStream work queue; load-aware) instead of the queue group")
	replicas := fs.Int("queue-replicas", 0, "replicas of the pool stream if this worker creates it (`N`, 1 to 5; default 1)")
	auth := addNATSAuthFlags(fs, bus.RoleWorker)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fs, "takes no arguments, got %q", pos)
	}
	if err := auth.check(fs); err != nil {
		return err
	}
	if *limit < 0 {
		return usageError(fs, "--concurrency must not be negative, got %d", *limit)
	}
	if *pool != "" {
		if err := actors.ValidatePool(*pool); err != nil {
			return usageError(fs, "--pool: %v", err)
		}
	}
	if *replicas != 0 && (*pool == "" || *replicas < 1 || *replicas > 5) {
		return usageError(fs, "--queue-replicas needs --pool and a value from 1 to 5, got %d", *replicas)
	}
	build, ok := workerToolsets[*set]
	if !ok {
		return usageError(fs, "unknown tool set %q (known: demo)", *set)
	}
	tools, err := build()
	if err != nil {
		return err
	}
	nc, err := bus.Connect(ctx, splitURLs(*url), append(auth.options(), bus.WithName("weft-worker"))...)
	if err != nil {
		return fmt.Errorf("worker: connect to %s: %w (%s)", *url, err, connectHint(err))
	}
	defer nc.Close()
	opts := []worker.Option{worker.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))), worker.WithConcurrency(*limit)}
	if *id != "" {
		opts = append(opts, worker.WithID(*id))
	}
	if *pool != "" {
		opts = append(opts, worker.WithPool(*pool), worker.WithQueueReplicas(*replicas))
	}
	traced, stopTracing, err := workerTracing(ctx, stderr)
	if err != nil {
		return err
	}
	defer stopTracing()
	w, err := worker.New(nc, tools, append(opts, traced...)...)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(w.Definitions()))
	for _, d := range w.Definitions() {
		names = append(names, d.Name)
	}
	via := "queue group " + actors.WorkerQueueGroup
	if *pool != "" {
		via = "pool " + *pool
	}
	fmt.Fprintf(stdout, "worker %s serving %s on %s (%s)\n", w.ID(), strings.Join(names, ", "), *url, via)
	if err := w.Serve(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "worker stopped")
	return nil
}
