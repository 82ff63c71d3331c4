package weft_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// benchRuntime starts a runtime on memstore or on embedded JetStream.
func benchRuntime(b *testing.B, durable bool) *weft.Runtime {
	// The memory store keys its chain as the JetStream log of a data
	// directory does, so that both cases pay for it.
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	cfg := weft.Config{Store: memstore.New(memstore.WithChainKeys(keys))}
	if durable {
		cfg = weft.Config{DataDir: b.TempDir()}
	}
	rt, err := weft.Start(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	return rt
}

// benchRuns runs one run per iteration, with a fresh scripted model
// answering first, then "done", and reports p50/p99 latencies.
func benchRuns(b *testing.B, durable bool, tools []toolsets.Tool, first llm.Response) {
	rt := benchRuntime(b, durable)
	script := []llm.Response{first, llm.ScriptText("done")}
	model := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 {
			r := script[1]
			return &r, nil
		}
		r := script[0]
		return &r, nil
	})
	a, err := rt.NewAgent("bench", weft.AgentConfig{Model: model, Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := a.Run(ctx, "go")
		if err != nil || res.Status != weft.StatusCompleted {
			b.Fatalf("Run = %+v, %v", res, err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func benchTool(b *testing.B, name string, wait time.Duration, opts ...toolsets.Option) toolsets.Tool {
	t, err := toolsets.NewFunc(name, func(ctx context.Context, _ noArgs) (string, error) {
		if wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "ok", nil
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// calls returns n calls to distinct tools t0..t(n-1) (so that they run in
// parallel) and the tools.
func calls(b *testing.B, n int, wait time.Duration) ([]toolsets.Tool, llm.Response) {
	var tools []toolsets.Tool
	var cs []llm.ToolCall
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		tools = append(tools, benchTool(b, name, wait))
		cs = append(cs, call(fmt.Sprintf("c%d", i), name, `{}`))
	}
	return tools, llm.ScriptToolCalls(cs...)
}

// repeated returns one tool t0 built with opts and n calls to it in one
// response.
func repeated(b *testing.B, n int, wait time.Duration, opts ...toolsets.Option) ([]toolsets.Tool, llm.Response) {
	var cs []llm.ToolCall
	for i := range n {
		cs = append(cs, call(fmt.Sprintf("c%d", i), "t0", `{}`))
	}
	return []toolsets.Tool{benchTool(b, "t0", wait, opts...)}, llm.ScriptToolCalls(cs...)
}

// BenchmarkRepeatedTool measures one response with 8 calls of one tool that
// waits 20 ms, on memstore: unflagged, the repeated name makes the batch
// sequential (the seed's rule, about 8 × 20 ms); flagged
// toolsets.WithConcurrentSafe, the calls run in parallel (about 20 ms):
//
//	go test -run '^$' -bench BenchmarkRepeatedTool -benchtime=50x .
func BenchmarkRepeatedTool(b *testing.B) {
	b.Run("unflagged", func(b *testing.B) {
		tools, first := repeated(b, 8, 20*time.Millisecond)
		benchRuns(b, false, tools, first)
	})
	b.Run("concurrent-safe", func(b *testing.B) {
		tools, first := repeated(b, 8, 20*time.Millisecond, toolsets.WithConcurrentSafe(true))
		benchRuns(b, false, tools, first)
	})
}

// BenchmarkRun measures the runtime's own cost (scripted model, trivial or
// sleeping tools) for (a) one tool call then the final text, (b) one
// response with 8 calls to a tool that waits 20 ms, (c) one response with 64
// calls to a trivial tool, on memstore and on embedded JetStream (periodic
// fsync), as p50/p99 per run and allocations:
//
//	go test -run '^$' -bench . -benchmem -benchtime=2s .
//
// What limits it (CPU profiles, 2 cores): on memstore, per event the JSON
// encoding, the store's append (writing the event into fresh memory and
// hashing it for the chain) and the NATS publish of the event (about 10 µs
// an event, 11 events for (a)); per NATS hop (command, tool request, tool report) 10–20 µs of
// in-process delivery and JSON decoding; then GC. On JetStream, each event
// is one acknowledged publish (about 23 µs; a run's steps are split into
// single-event appends, see the actors package doc, "Appends"), so (a)
// costs at least 11 of them.
func BenchmarkRun(b *testing.B) {
	for _, store := range []struct {
		name    string
		durable bool
	}{{"memory", false}, {"jetstream", true}} {
		b.Run("a-one-call/"+store.name, func(b *testing.B) {
			tools, first := calls(b, 1, 0)
			benchRuns(b, store.durable, tools, first)
		})
		b.Run("b-8-calls-20ms/"+store.name, func(b *testing.B) {
			tools, first := calls(b, 8, 20*time.Millisecond)
			benchRuns(b, store.durable, tools, first)
		})
		b.Run("c-64-calls/"+store.name, func(b *testing.B) {
			tools, first := calls(b, 64, 0)
			benchRuns(b, store.durable, tools, first)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/call")
		})
	}
}
