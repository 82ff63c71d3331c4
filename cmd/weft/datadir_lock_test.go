package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-run/weft"
)

// While a node runs on a data directory, the read-only commands on it are
// refused and told to use --nats, and a second node on it is refused
// naming the first one's pid; once the node stops, they read it.
func TestDataDirOfARunningNode(t *testing.T) {
	for _, listen := range []string{"", "127.0.0.1:-1"} {
		t.Run("listen="+listen, func(t *testing.T) {
			dir := t.TempDir()
			n, err := startNode(t.Context(), nodeConfig{dataDir: dir, listen: listen})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = n.close() })
			if _, _, err := n.startDemoRun(t.Context()); err != nil {
				t.Fatal(err)
			}
			pid := strconv.Itoa(os.Getpid())

			reads := [][]string{
				{"sessions", "--data", dir},
				{"approvals", "--data", dir},
				{"audit", "verify", "--data", dir},
				{"replay", "--data", dir},
			}
			for _, args := range reads {
				_, _, err := cli(t, args...)
				if !errors.Is(err, errNodeRunning) || !errors.Is(err, weft.ErrDataDirLocked) {
					t.Errorf("weft %s on a running node's directory: %v, want errNodeRunning", strings.Join(args, " "), err)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, "--nats") || !strings.Contains(msg, "pid "+pid) {
					t.Errorf("weft %s: %q, want it to say --nats and pid %s", strings.Join(args, " "), msg, pid)
				}
			}

			_, err = startNode(t.Context(), nodeConfig{dataDir: dir, listen: listen})
			if !errors.Is(err, weft.ErrDataDirLocked) || !strings.Contains(err.Error(), "process "+pid) {
				t.Fatalf("a second node on the directory: %v, want ErrDataDirLocked naming pid %s", err, pid)
			}

			if err := n.close(); err != nil {
				t.Fatal(err)
			}
			for _, args := range reads {
				if _, _, err := cli(t, args...); err != nil {
					t.Errorf("weft %s on the stopped node's directory: %v", strings.Join(args, " "), err)
				}
			}
		})
	}
}
