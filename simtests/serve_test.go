package simtests

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// weft serve's cluster flags: mistakes exit with status 2 and say what is
// wrong, before anything starts.
func TestServeClusterFlagErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the weft binary; skipped with -short")
	}
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"replicas without --nats", []string{"--replicas", "3"}, "--replicas is for a node on an external NATS"},
		{"node id without --nats", []string{"--node-id", "a"}, "--node-id is for a node on an external NATS"},
		{"remote tools without --nats", []string{"--remote-tools"}, "--remote-tools is for a node on an external NATS"},
		{"empty URL in the list", []string{"--nats", "nats://127.0.0.1:1,,nats://127.0.0.1:2"}, "has an empty URL in its list"},
		{"replicas out of range", []string{"--nats", "nats://127.0.0.1:1", "--replicas", "7"}, "--replicas must be 1 to 5"},
		{"negative lease TTL", []string{"--nats", "nats://127.0.0.1:1", "--lease-ttl", "-1s"}, "--lease-ttl must be positive"},
		{"TLS certificate without key", []string{"--nats", "nats://127.0.0.1:1", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bins.weft, append([]string{"serve"}, tt.args...)...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("weft serve %v: %v, want exit status 2\n%s", tt.args, err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("weft serve %v said:\n%s\nwant it to contain %q", tt.args, out, tt.want)
			}
		})
	}
}
