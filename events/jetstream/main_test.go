package jetstream_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every embedded
// server is shut down, every connection closed, every subscription
// stopped.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
