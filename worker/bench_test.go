package worker_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/protocol"
)

// BenchmarkRemoteRoundTrip measures the protocol round trip of one remote
// call on loopback, as a node's scheduler makes it, to one worker process:
// "group", the request on <root>.worker.call.echo_0 (headers and
// ToolRequest body) through the core queue group; "pool", the request
// published into the pool stream on <root>.worker.queue.bench.echo_0 (its
// acknowledgement not waited for, as the scheduler does not) and pulled by
// the worker. Both end with the worker's heartbeat and returned reports.
// It reports the p50 and p99 latency.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	for _, mode := range dispatchModes {
		b.Run(mode.name, func(b *testing.B) {
			_, url := node(b)
			startWorker(b, url, "w1", false, mode.env...)
			nc, err := nats.Connect(url)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(nc.Close)
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			inbox := nc.NewInbox()
			reports := make(chan *nats.Msg, 16)
			sub, err := nc.ChanSubscribe(inbox, reports)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = sub.Unsubscribe() })
			subject, _ := protocol.WorkerCallSubject(bus.Default, "echo_0")
			if mode.name == "pool" {
				subject, _ = protocol.WorkerQueueSubject(bus.Default, "bench", "echo_0")
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				id := "c" + strconv.Itoa(i)
				data, _ := json.Marshal(protocol.ToolRequest{SessionID: "s", RunID: "r", CallID: id, Name: "echo_0", Arguments: json.RawMessage(`{}`)})
				msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
				msg.Header.Set(protocol.HeaderCallID, id)
				msg.Header.Set(protocol.HeaderDelivery, "1")
				msg.Header.Set(protocol.HeaderHeartbeat, "250")
				start := time.Now()
				if mode.name == "pool" {
					msg.Header.Set(protocol.HeaderReply, inbox)
					_, err = js.PublishMsgAsync(msg)
				} else {
					msg.Reply = inbox
					err = nc.PublishMsg(msg)
				}
				if err != nil {
					b.Fatal(err)
				}
				for {
					var r protocol.ToolReport
					if err := json.Unmarshal((<-reports).Data, &r); err != nil {
						b.Fatal(err)
					}
					if r.Type == protocol.ReportReturned {
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
		})
	}
}

// BenchmarkRemoteThroughput runs agent runs whose response calls one
// remote tool, remoteStreams runs at once (each in its own session), served
// by 1, 2 and 4 worker processes that each run at most 4 calls at once:
// "wait10ms" waits 10 ms (so throughput should grow with the workers, up to
// 400 calls/s per worker), "echo" answers at once (protocol and runtime
// overhead). It reports tool calls per second through the whole runtime
// (each run: run.started, a model step, the call, a second model step,
// run.completed, appended to a memstore).
func BenchmarkRemoteThroughput(b *testing.B) {
	for _, mode := range dispatchModes {
		for _, tool := range []string{"wait10ms", "echo"} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/%s/workers=%d", mode.name, tool, workers), func(b *testing.B) {
					rt, url := node(b)
					for i := range workers {
						startWorker(b, url, fmt.Sprintf("w%d", i), false, append(mode.env, envLimit+"=4")...)
					}
					name := tool + "_0"
					a := agent(b, rt, name)
					p := prompt(b, call("c1", name, `{}`))
					// Warm up: the first runs wait for the workers' subscriptions.
					if _, err := a.Run(b.Context(), p); err != nil {
						b.Fatal(err)
					}
					b.SetParallelism(remoteStreams / runtime.GOMAXPROCS(0))
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							res, err := a.Run(b.Context(), p)
							if err != nil || res.Status != "completed" {
								b.Errorf("run: %v %v", res, err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
				})
			}
		}
	}
}

// dispatchModes are the two ways workers take calls: the core queue group
// (at random) and a worker pool (JetStream work queue, load-aware).
var dispatchModes = []struct {
	name string
	env  []string
}{
	{"group", nil},
	{"pool", []string{envPool + "=bench"}},
}

// remoteStreams is how many runs BenchmarkRemoteThroughput keeps going at
// once: twice the slots of four workers.
const remoteStreams = 32

// BenchmarkRemoteBurst runs agent runs whose one response calls 64 remote
// tools in parallel (64 names: a batch that repeats a name runs one call
// at a time), served by 1, 2 and 4 worker processes that each run at most
// 4 calls at once: "wait10ms" waits 10 ms, so a run ends when the worker
// with the most calls is done and the figure shows how evenly a burst is
// spread over the workers' free slots (ideal: 400 calls/s per worker);
// "echo" answers at once (the protocol's cost per call, the runtime's per
// run spread over 64 calls).
func BenchmarkRemoteBurst(b *testing.B) {
	for _, mode := range dispatchModes {
		for _, tool := range []string{"wait10ms", "echo"} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/%s/workers=%d", mode.name, tool, workers), func(b *testing.B) {
					rt, url := node(b)
					for i := range workers {
						startWorker(b, url, fmt.Sprintf("w%d", i), false, append(mode.env, envLimit+"=4")...)
					}
					batch := make([]llm.ToolCall, benchTools)
					names := make([]string, benchTools)
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
					b.ReportMetric(float64(b.N*benchTools)/b.Elapsed().Seconds(), "calls/s")
				})
			}
		}
	}
}
