//go:build unix

package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/envtest"
	"github.com/weft-run/weft/toolsets/environment/local"
)

func TestConformance(t *testing.T) {
	envtest.TestFileSystem(t, func(t *testing.T, files map[string]string, p environment.FilePolicy) environment.FileSystem {
		dir := t.TempDir()
		for name, content := range files {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		}
		l, err := local.New(dir, local.WithFilePolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	})
	envtest.TestShellPolicy(t, func(t *testing.T, p environment.ShellPolicy) environment.Shell {
		l, err := local.New(t.TempDir(), local.WithShellPolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	})
}
