//go:build !race

package weft_test

// heapRuns is how many runs TestHeapFlat runs: 100,000 (about a minute on
// this project's 2-core machines).
const heapRuns = 100_000
