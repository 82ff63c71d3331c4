//go:build !race

package weft_test

// TestHeapFlat's runs (about two minutes on this project's 2-core
// machines): 25,000 to warm up, then 100,000 measured, whose heap may grow
// by heapSlack + 100,000*heapPerRun (5.1 MB, 51 B a run). heapSlack covers
// what grows once to a working size and stays after the warm-up (buffers,
// mailbox queues, map tables that do not shrink, the rest of protoactor's
// registry tables) and the readings' noise (see heap_test.go).
const (
	heapWarmup = 25_000
	heapRuns   = 100_000
	heapSlack  = 3 << 20
)
