package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/bus"
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

// A node started again on its data directory is the same node.
func TestRestartKeepsNodeID(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for range 2 {
		n, err := startNode(t.Context(), nodeConfig{dataDir: dir, listen: "127.0.0.1:-1"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.rt.NodeID())
		if err := n.close(); err != nil {
			t.Fatal(err)
		}
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("node ids of two starts on one data directory: %q", ids)
	}
}

func ptr[T any](v T) *T { return &v }
