package virtual_test

import (
	"testing"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/envtest"
	"github.com/weft-run/weft/toolsets/environment/virtual"
)

func TestConformance(t *testing.T) {
	envtest.TestFileSystem(t, func(t *testing.T, files map[string]string, p environment.FilePolicy) environment.FileSystem {
		v, err := virtual.New(files, virtual.WithFilePolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
	envtest.TestShellPolicy(t, func(t *testing.T, p environment.ShellPolicy) environment.Shell {
		v, err := virtual.New(nil, virtual.WithShellPolicy(p), virtual.WithCommand("echo ok", virtual.Output{Stdout: "ok\n"}))
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
}
