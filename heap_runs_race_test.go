//go:build race

package weft_test

// heapRuns is how many runs TestHeapFlat runs under the race detector:
// 5,000, not 100,000, since a run costs about ten times as much there; the
// bound scales with it (heapSlack + heapRuns*heapPerRun).
const heapRuns = 5_000
