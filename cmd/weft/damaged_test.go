package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// corruptBlock flips bytes in the middle of the event stream's block file
// in the stopped node's data directory dir.
func corruptBlock(t *testing.T, dir string) {
	t.Helper()
	var blocks []string
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		// The event stream's own blocks, not its blob bucket's.
		if err == nil && filepath.Base(filepath.Dir(filepath.Dir(p))) == jetstream.DefaultStreamName && strings.HasSuffix(p, ".blk") {
			blocks = append(blocks, p)
		}
		return err
	})
	if len(blocks) == 0 {
		t.Fatal("no block file of the event stream")
	}
	data, err := os.ReadFile(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 3; i < len(data)/3+40; i++ {
		data[i] ^= 0xff
	}
	if err := os.WriteFile(blocks[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A data directory whose file store has a corrupted block: weft serve,
// weft audit verify and weft sessions fail within seconds with an error
// naming the damage (events.ErrDamagedStore), instead of hanging in
// recovery or for audit verify's whole timeout. The commands are bounded
// by --timeout, and the test by its context.
func TestDamagedDataDirFailsFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	n, err := startNode(ctx, nodeConfig{dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.startDemoRun(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	corruptBlock(t, dir)

	for _, args := range [][]string{
		{"audit", "verify", "--data", dir, "--timeout", "60s"},
		{"sessions", "--data", dir, "--timeout", "60s"},
	} {
		start := time.Now()
		_, _, err := cli(t, args...)
		if !errors.Is(err, events.ErrDamagedStore) {
			t.Errorf("weft %s: %v after %v, want ErrDamagedStore", strings.Join(args, " "), err, time.Since(start))
		}
	}
	n, err = startNode(ctx, nodeConfig{dataDir: dir})
	if err == nil {
		_ = n.close()
	}
	if !errors.Is(err, events.ErrDamagedStore) || !strings.Contains(err.Error(), "position") {
		t.Errorf("a node on the damaged directory: %v, want ErrDamagedStore naming the position", err)
	}
}
