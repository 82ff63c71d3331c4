package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// The test binary re-run as the weft command (see startChild).
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "weft:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m,
		// nats.go's object store Put makes a JetStream context per call and
		// cleans it up on return; when the cleanup wins the race with the
		// goroutine it started, that goroutine waits on a nil channel for
		// good (nats.go v1.55.0, jetstream/object.go:693 with publish.go:451).
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
		// protoactor starts a goroutine per throttle period after a dead
		// letter (a message to a stopped actor); it ends on its own a
		// period later, which under load may be after the last test.
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"launch"}},
		{"tools with arguments", []string{"tools", "extra"}},
		{"unknown global flag", []string{"-verbose", "demo"}},
		{"unknown tools flag", []string{"tools", "-verbose"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tt.args, &stdout, &stderr); !errors.Is(err, errUsage) {
				t.Errorf("err = %v, want a usage error", err)
			}
			if !strings.Contains(stderr.String(), "usage: weft") {
				t.Errorf("stderr lacks the usage message:\n%s", stderr.String())
			}
		})
	}
}
