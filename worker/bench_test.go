package worker_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/llm"
)

// BenchmarkRemoteRoundTrip measures the protocol round trip of one remote
// call on loopback, as a node's scheduler makes it: the request on
// <root>.worker.call.echo_0 (headers and ToolRequest body) to one worker
// process, its heartbeat and returned reports back. It reports the p50
// and p99 latency.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	_, url := node(b)
	startWorker(b, url, "w1", false)
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	inbox := nc.NewInbox()
	reports := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(inbox, reports)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sub.Unsubscribe() })
	subject, _ := actors.WorkerCallSubject(bus.Default, "echo_0")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := "c" + strconv.Itoa(i)
		data, _ := json.Marshal(actors.ToolRequest{SessionID: "s", RunID: "r", CallID: id, Name: "echo_0", Arguments: json.RawMessage(`{}`)})
		msg := &nats.Msg{Subject: subject, Reply: inbox, Data: data, Header: nats.Header{}}
		msg.Header.Set(actors.HeaderCallID, id)
		msg.Header.Set(actors.HeaderDelivery, "1")
		msg.Header.Set(actors.HeaderHeartbeat, "250")
		start := time.Now()
		if err := nc.PublishMsg(msg); err != nil {
			b.Fatal(err)
		}
		for {
			var r actors.ToolReport
			if err := json.Unmarshal((<-reports).Data, &r); err != nil {
				b.Fatal(err)
			}
			if r.Type == actors.ReportReturned {
				if r.CallID != id || r.Return.Kind != "success" {
					b.Fatalf("report %+v", r)
				}
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRemoteThroughput runs agent runs whose one response calls 64
// remote tools in parallel (64 names: a batch that repeats a name runs one
// call at a time), served by 1, 2 and 4 worker processes
// that each run at most 4 calls at once: "wait10ms" waits 10 ms (so
// throughput should scale with the workers), "echo" answers at once
// (protocol and runtime overhead). It reports tool calls per second,
// through the whole runtime (events appended to a memstore).
func BenchmarkRemoteThroughput(b *testing.B) {
	const calls = benchTools
	for _, tool := range []string{"wait10ms", "echo"} {
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", tool, workers), func(b *testing.B) {
				rt, url := node(b)
				for i := range workers {
					startWorker(b, url, fmt.Sprintf("w%d", i), false, envLimit+"=4")
				}
				batch := make([]llm.ToolCall, calls)
				names := make([]string, calls)
				for i := range batch {
					names[i] = fmt.Sprintf("%s_%d", tool, i)
					batch[i] = call(fmt.Sprintf("c%d", i), names[i], `{}`)
				}
				a := agent(b, rt, names...)
				p := prompt(b, batch...)
				b.ResetTimer()
				for b.Loop() {
					res, err := a.Run(b.Context(), p)
					if err != nil || res.Status != "completed" {
						b.Fatalf("run: %v %v", res, err)
					}
				}
				b.ReportMetric(float64(b.N*calls)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}
