//go:build race

package events_test

// raceEnabled: the race detector is on, and allocation counts differ.
const raceEnabled = true
