// Command simworker is the tool worker of the simulation tests: it serves
// the demo agent's tools (lookup, fetch_ticket, deploy; the same names,
// arguments and results as weft worker --tools demo; deploy's result also
// names the worker) from the worker queue group, and records deploy's side
// effect as a file per execution in --effects, so that a test counts how
// often each call ran and under which session, run and call id (the call's
// idempotency key). --deploy-delay makes deploy last long enough to fault
// a worker in the middle of it. With --pool the worker takes its calls
// from that worker pool (a JetStream work queue, its stream created with
// --queue-replicas replicas) instead of the queue group; --concurrency
// limits the calls it runs at once (a pooled worker pulls one call per
// free slot).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// Effect is the content of an effect file: one execution of deploy.
type Effect struct {
	Worker  string `json:"worker"`
	Session string `json:"session"`
	RunID   string `json:"run_id"`
	CallID  string `json:"call_id"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simworker:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("nats", "", "the NATS `URLs`, comma-separated")
	id := flag.String("id", "", "the worker's `ID`")
	effects := flag.String("effects", "", "write a file per deploy execution in `DIR`")
	delay := flag.Duration("deploy-delay", 0, "how long deploy runs")
	fetchDelay := flag.Duration("fetch-delay", 0, "how long fetch_ticket runs")
	pool := flag.String("pool", "", "take calls from worker pool `NAME` instead of the queue group")
	replicas := flag.Int("queue-replicas", 0, "replicas of the pool stream if this worker creates it (`N`)")
	limit := flag.Int("concurrency", 0, "run at most `N` calls at once (0: the default)")
	flag.Parse()
	if *url == "" || *id == "" || *effects == "" {
		return fmt.Errorf("--nats, --id and --effects are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	tools, err := demoTools(*id, *effects, *delay, *fetchDelay)
	if err != nil {
		return err
	}
	nc, err := bus.Connect(ctx, strings.Split(*url, ","))
	if err != nil {
		return err
	}
	defer nc.Close()
	opts := []worker.Option{worker.WithID(*id), worker.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))}
	if *pool != "" {
		opts = append(opts, worker.WithPool(*pool), worker.WithQueueReplicas(max(*replicas, 1)))
	}
	if *limit > 0 {
		opts = append(opts, worker.WithConcurrency(*limit))
	}
	w, err := worker.New(nc, tools, opts...)
	if err != nil {
		return err
	}
	fmt.Printf("worker %s serving\n", w.ID())
	return w.Serve(ctx)
}

type (
	lookupArgs struct {
		TicketID string `json:"ticket_id"`
	}
	fetchArgs struct {
		TicketID       string `json:"ticket_id"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	deployArgs struct {
		Release     string `json:"release"`
		Environment string `json:"environment"`
	}
)

// demoTools are the demo's tools; deploy writes an effect file (named by
// time and worker, so that names sort in time order) before it waits delay; fetch_ticket waits fetchDelay.
func demoTools(id, dir string, delay, fetchDelay time.Duration) ([]toolsets.Tool, error) {
	lookup, err := toolsets.NewFunc("lookup", func(_ context.Context, a lookupArgs) (map[string]string, error) {
		return map[string]string{"ticket_id": a.TicketID, "title": "Login fails after upgrade", "status": "open"}, nil
	}, toolsets.WithDescription("Look up a ticket."))
	if err != nil {
		return nil, err
	}
	fetch, err := toolsets.NewFunc("fetch_ticket", func(ctx context.Context, a fetchArgs) (map[string]any, error) {
		if err := wait(ctx, fetchDelay); err != nil {
			return nil, err
		}
		return map[string]any{"ticket_id": a.TicketID, "fixed_in": "v1.4.2"}, nil
	}, toolsets.WithDescription("Fetch a support ticket."))
	if err != nil {
		return nil, err
	}
	deploy, err := toolsets.NewContextFunc("deploy", func(ctx context.Context, tc *toolsets.ToolContext, a deployArgs) (map[string]any, error) {
		b, err := json.Marshal(Effect{Worker: id, Session: tc.SessionID, RunID: tc.RunID, CallID: tc.CallID})
		if err != nil {
			return nil, err
		}
		name := filepath.Join(dir, fmt.Sprintf("%d.%s.json", time.Now().UnixNano(), id))
		if err := os.WriteFile(name+".tmp", b, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(name+".tmp", name); err != nil {
			return nil, err
		}
		if err := wait(ctx, delay); err != nil {
			return nil, err
		}
		return map[string]any{"release": a.Release, "environment": a.Environment, "deployed": true, "worker": id}, nil
	}, toolsets.WithDescription("Deploy a release."))
	if err != nil {
		return nil, err
	}
	return []toolsets.Tool{lookup, fetch, deploy}, nil
}

// wait waits d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
