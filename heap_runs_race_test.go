//go:build race

package weft_test

// TestHeapFlat's runs under the race detector, where a run costs about ten
// times as much: 5,000 to warm up, then 5,000 measured. heapSlack is
// larger than without it, 4 MiB (bound 4.3 MB, 860 B a run): 5,000 runs
// do not take the one-time growth of protoactor's registry (see
// heap_test.go), of which the measured runs then pay a part (1.7 MB
// measured). It still fails a runtime that keeps its finished sessions
// (6.3 KiB a run); the finer bound is the one without -race.
const (
	heapWarmup = 5_000
	heapRuns   = 5_000
	heapSlack  = 4 << 20
)
