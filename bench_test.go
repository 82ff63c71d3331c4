package weft_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// benchStore is where a benchmark's runtime keeps its event log.
type benchStore struct {
	name   string
	config func(tb testing.TB) weft.Config
}

// benchStores are the logs of BenchmarkWorkload: memstore, and the
// embedded JetStream of a data directory with the default fsync policy
// (bus.SyncPeriodic) and with bus.SyncAlways.
var benchStores = []benchStore{
	{"memory", memoryConfig},
	{"jetstream", func(tb testing.TB) weft.Config { return weft.Config{DataDir: tb.TempDir()} }},
	{"jetstream-syncalways", func(tb testing.TB) weft.Config {
		return weft.Config{DataDir: tb.TempDir(), Sync: bus.SyncAlways}
	}},
}

// memoryConfig is a runtime on a memstore whose chain is keyed as the
// JetStream log of a data directory is, so that both cases pay for it.
func memoryConfig(tb testing.TB) weft.Config {
	keys, err := events.NewChainKeys()
	if err != nil {
		tb.Fatal(err)
	}
	return weft.Config{Store: memstore.New(memstore.WithChainKeys(keys))}
}

// benchRuntime starts a runtime on cfg, closed when tb ends.
func benchRuntime(tb testing.TB, cfg weft.Config) *weft.Runtime {
	rt, err := weft.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close() })
	return rt
}

// workload is one scripted run: the model asks for calls calls of one tool
// t0 whose func waits wait, then answers "done" once it sees their returns.
// safe marks t0 toolsets.WithConcurrentSafe, so that the runtime runs the
// calls in parallel; unflagged, the repeated name makes them sequential
// (the seed's rule).
type workload struct {
	calls int
	wait  time.Duration
	safe  bool
}

var (
	// w1 is one tool call, then the final text.
	w1 = workload{calls: 1}
	// w2 is 8 calls to a concurrency-safe tool that waits 20 ms.
	w2 = workload{calls: 8, wait: 20 * time.Millisecond, safe: true}
	// w3 is 64 calls to a trivial concurrency-safe tool.
	w3 = workload{calls: 64, safe: true}
)

// noArgsFunc is the func of a workload's tool.
type noArgsFunc func(ctx context.Context, _ noArgs) (string, error)

// fn returns the workload's tool func: it waits w.wait (or until ctx
// ends), then returns "ok".
func (w workload) fn() noArgsFunc {
	wait := w.wait
	return func(ctx context.Context, _ noArgs) (string, error) {
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "ok", nil
	}
}

// tools returns the workload's tool t0 around fn.
func (w workload) tools(tb testing.TB, fn noArgsFunc) []toolsets.Tool {
	var opts []toolsets.Option
	if w.safe {
		opts = append(opts, toolsets.WithConcurrentSafe(true))
	}
	t, err := toolsets.NewFunc("t0", fn, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return []toolsets.Tool{t}
}

// model returns the workload's scripted model: the calls when the last
// message carries no tool return, else the final text "done".
func (w workload) model() llm.Func {
	cs := make([]llm.ToolCall, w.calls)
	for i := range cs {
		cs[i] = call(fmt.Sprintf("c%d", i), "t0", `{}`)
	}
	script := []llm.Response{llm.ScriptToolCalls(cs...), llm.ScriptText("done")}
	return func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		r := script[0]
		if len(last.ToolReturns()) > 0 {
			r = script[1]
		}
		return &r, nil
	}
}

// agent registers the workload's agent "bench" on rt.
func (w workload) agent(tb testing.TB, rt *weft.Runtime) *weft.Agent {
	a, err := rt.NewAgent("bench", weft.AgentConfig{Model: w.model(), Tools: w.tools(tb, w.fn())})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// floor runs the workload once with no runtime: the model asked, the
// tool func called directly for each call (in parallel goroutines when the
// runtime runs the calls in parallel), the model asked again with the
// returns. It records nothing: it is what a run costs a framework that
// keeps no log.
func (w workload) floor(ctx context.Context, model llm.Func, fn noArgsFunc) error {
	msgs := []llm.Message{llm.UserMessage("go")}
	r, err := model(ctx, &llm.Request{Messages: msgs})
	if err != nil {
		return err
	}
	calls := make([]llm.Part, len(r.ToolCalls))
	returns := make([]llm.Part, len(r.ToolCalls))
	errs := make([]error, len(r.ToolCalls))
	one := func(i int, c llm.ToolCall) {
		out, err := fn(ctx, noArgs{})
		calls[i] = c
		returns[i], errs[i] = llm.ToolReturn{CallID: c.ID, Name: c.Name, Content: llm.TextContent(out)}, err
	}
	if w.safe {
		var wg sync.WaitGroup
		for i, c := range r.ToolCalls {
			wg.Go(func() { one(i, c) })
		}
		wg.Wait()
	} else {
		for i, c := range r.ToolCalls {
			one(i, c)
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: calls}, llm.Message{Role: llm.RoleUser, Parts: returns})
	r, err = model(ctx, &llm.Request{Messages: msgs})
	if err != nil {
		return err
	}
	if r.Text != "done" {
		return fmt.Errorf("floor: the second turn answered %+v", r)
	}
	return nil
}

// floorRuns is the most runs of the floor a benchmark times (at most b.N):
// enough for a stable p50, while W2's floor takes 20 ms a run.
const floorRuns = 100

// measureFloor times min(b.N, floorRuns) runs of w's floor, with the
// benchmark's timer stopped, and returns their p50.
func measureFloor(b *testing.B, w workload) time.Duration {
	b.Helper()
	model, fn := w.model(), w.fn()
	ctx := context.Background()
	lat := make([]time.Duration, 0, min(b.N, floorRuns))
	for range cap(lat) {
		start := time.Now()
		if err := w.floor(ctx, model, fn); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	p50, _ := quantiles(lat)
	return p50
}

// sameSessionRuns is how many runs the same-session variant runs in one
// session before it starts the next. A session's conversation grows with
// every run and a run's cost grows with it (W1 in memory, 2026-12-01: about
// 0.85 ms a run in sessions of 10 runs, 2.8 ms in sessions of 100, 13 ms
// in sessions of 1,000), so that without a cap a run's cost would grow
// with b.N.
const sameSessionRuns = 10

// benchRuns runs w on a runtime of cfg once per iteration, each run in a
// new session or (same) in sessions of sameSessionRuns runs, and reports
// p50/p99 per run, allocations per run, the floor's p50 (floor-p50-µs,
// measured after the timer stopped) and the ratio of the p50s (x-floor).
func benchRuns(b *testing.B, cfg weft.Config, w workload, same bool) {
	rt := benchRuntime(b, cfg)
	a := w.agent(b, rt)
	ctx := context.Background()
	var s *weft.Session
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		var res *weft.Result
		var err error
		if same {
			if i%sameSessionRuns == 0 {
				s = a.NewSession()
			}
			res, err = s.Run(ctx, "go")
		} else {
			res, err = a.Run(ctx, "go")
		}
		if err != nil || res.Status != weft.StatusCompleted {
			b.Fatalf("Run = %+v, %v", res, err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := quantiles(lat)
	floor := measureFloor(b, w)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(floor.Nanoseconds())/1e3, "floor-p50-µs")
	b.ReportMetric(float64(p50)/float64(max(floor, 1)), "x-floor")
}

// quantiles returns the p50 and p99 of lat, which it sorts.
func quantiles(lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// BenchmarkRepeatedTool measures one response with 8 calls of one tool that
// waits 20 ms, on memstore, a new session per run: unflagged, the repeated
// name makes the batch sequential (the seed's rule, about 8 × 20 ms);
// flagged toolsets.WithConcurrentSafe (workload W2), the calls run in
// parallel (about 20 ms):
//
//	go test -run '^$' -bench BenchmarkRepeatedTool -benchtime=50x .
func BenchmarkRepeatedTool(b *testing.B) {
	unflagged := w2
	unflagged.safe = false
	b.Run("unflagged", func(b *testing.B) { benchRuns(b, memoryConfig(b), unflagged, false) })
	b.Run("concurrent-safe", func(b *testing.B) { benchRuns(b, memoryConfig(b), w2, false) })
}
