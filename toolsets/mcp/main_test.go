package mcp_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(envServer) == "1" {
		runTestServer()
	}
	goleak.VerifyTestMain(m)
}
