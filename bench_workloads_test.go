package weft_test

import (
	"testing"
)

// BenchmarkWorkload measures the runtime's own cost of a run (scripted
// model, the tools below), named
//
//	BenchmarkWorkload/<workload>/<store>/<session>
//
// with workloads
//   - W1: one model turn asking for 1 call of a trivial tool, the call, a
//     second turn with the final text (11 events);
//   - W2: one turn asking for 8 calls of a tool that waits 20 ms, marked
//     toolsets.WithConcurrentSafe (the calls run in parallel);
//   - W3: one turn asking for 64 calls of a trivial concurrency-safe tool;
//
// stores memory (memstore, chain keyed), jetstream (the embedded server of
// a data directory, default fsync policy bus.SyncPeriodic) and
// jetstream-syncalways (Config.Sync = bus.SyncAlways); and sessions
// new-session (a new session per run, as a service handling independent
// requests does) and same-session (runs follow each other in one session,
// a new one every sameSessionRuns runs).
//
// Each reports, besides ns/op and allocs/op (allocations per run, the
// whole process counted), p50-µs and p99-µs per run, floor-p50-µs (the
// p50 of the plain Go floor: the same model and tool funcs called
// directly, in parallel goroutines for W2 and W3; see workload.floor),
// x-floor (p50 / floor p50) and, for W3, ns/call (ns/op / 64):
//
//	go test -run '^$' -bench BenchmarkWorkload -benchtime=200x .
//	go test -run '^$' -bench 'BenchmarkWorkload/W1/memory/new-session' -benchtime=2s -cpuprofile cpu.out .
//
// Progress shows only through the testing framework (one line per
// sub-benchmark); timings are reported, never asserted.
func BenchmarkWorkload(b *testing.B) {
	for _, wl := range []struct {
		name string
		w    workload
	}{{"W1", w1}, {"W2", w2}, {"W3", w3}} {
		b.Run(wl.name, func(b *testing.B) {
			for _, store := range benchStores {
				b.Run(store.name, func(b *testing.B) {
					for _, sess := range []struct {
						name string
						same bool
					}{{"new-session", false}, {"same-session", true}} {
						b.Run(sess.name, func(b *testing.B) {
							benchRuns(b, store.config(b), wl.w, sess.same)
							if wl.w.calls > 1 && wl.w.wait == 0 {
								b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(wl.w.calls), "ns/call")
							}
						})
					}
				})
			}
		})
	}
}
