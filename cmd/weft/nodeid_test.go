package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// A data directory keeps its node's id: a new one is written on first use
// and read back unchanged after; a file that does not hold an id is an
// error naming the file, never a silently new identity.
func TestDataDirNodeID(t *testing.T) {
	tests := []struct {
		name    string
		file    *string // the node id file's content before; nil: none
		want    string  // "" with no file: any new id
		wantErr error
	}{
		{name: "new data directory"},
		{name: "kept id", file: ptr("node-7\n"), want: "node-7"},
		{name: "empty file", file: ptr(""), wantErr: errBadNodeID},
		{name: "not a subject token", file: ptr("node.7\n"), wantErr: errBadNodeID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, nodeIDFile)
			if tt.file != nil {
				if err := os.WriteFile(path, []byte(*tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			id, err := dataDirNodeID(dir)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("dataDirNodeID = %q, %v; want %v naming %s", id, err, tt.wantErr, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bus.ValidToken(id) || (tt.want != "" && id != tt.want) {
				t.Fatalf("dataDirNodeID = %q, want %q", id, tt.want)
			}
			again, err := dataDirNodeID(dir)
			if err != nil || again != id {
				t.Fatalf("read again: %q, %v; want %q", again, err, id)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the data directory holds %d entries, want the node id file only", len(entries))
			}
		})
	}
}

// A node started again on its data directory is the same node: the lease
// of a session whose run its previous process left running (killed: the
// lease neither released nor expired) is its own, so Recover carries the
// run on at once. Under a new node id Recover would leave it to the dead
// node until the lease expired, and nothing would carry it on after.
func TestRestartRecoversOwnLeases(t *testing.T) {
	dir := t.TempDir()
	const session = "left-running"
	n, err := startNode(t.Context(), nodeConfig{dataDir: dir, listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	first := n.rt.NodeID()
	// The killed process's leftovers: the run started, and its lease,
	// which the lease TTL (10 s) keeps for longer than this test.
	input, _ := json.Marshal(demoPrompt)
	ev := events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: demoAgent, Input: input}, events.WithSession(session), events.WithRun("r1"))
	if _, err := n.rt.Store().Append(t.Context(), events.SessionStream(session), events.NoStream, ev); err != nil {
		t.Fatal(err)
	}
	leases, err := actors.NewLeases(t.Context(), n.rt.Conn(), actors.LeaseConfig{NodeID: first})
	if err != nil {
		t.Fatal(err)
	}
	if owner, err := leases.Acquire(t.Context(), session); err != nil || owner != first {
		t.Fatalf("acquire the lease as %s: %q, %v", first, owner, err)
	}
	if err := n.close(); err != nil {
		t.Fatal(err)
	}

	n, err = startNode(t.Context(), nodeConfig{dataDir: dir, listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.close() })
	if got := n.rt.NodeID(); got != first {
		t.Errorf("restarted node id %q, want %q", got, first)
	}
	if diff := cmp.Diff([]string{session}, n.recovered); diff != "" {
		t.Errorf("recovered (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
