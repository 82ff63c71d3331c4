//go:build linux

package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
)

func benchRoot(b *testing.B) *local.Provider {
	b.Helper()
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f.txt"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// BenchmarkReadFile reads a 4 KiB file two directories deep.
func BenchmarkReadFile(b *testing.B) {
	p := benchRoot(b)
	for b.Loop() {
		if _, err := p.ReadFile(b.Context(), "a/b/f.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFile writes 4 KiB two directories deep (temporary file,
// fsync, rename).
func BenchmarkWriteFile(b *testing.B) {
	p := benchRoot(b)
	data := make([]byte, 4096)
	for b.Loop() {
		if _, err := p.WriteFile(b.Context(), "a/b/w.txt", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun runs /bin/true as a process group.
func BenchmarkRun(b *testing.B) {
	p := benchRoot(b)
	for b.Loop() {
		if _, err := p.Run(b.Context(), environment.Command{Argv: []string{"/bin/true"}}); err != nil {
			b.Fatal(err)
		}
	}
}
