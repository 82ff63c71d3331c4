package virtual_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/virtual"
)

func newEnv(t *testing.T, opts ...virtual.Option) *virtual.Provider {
	t.Helper()
	v, err := virtual.New(virtual.Files{"README.md": "hello", "src/main.go": "package main\n", "src/lib/a.go": "package lib\n"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files virtual.Files
		err   error
	}{
		{"outside", virtual.Files{"../x": ""}, environment.ErrOutsideRoot},
		{"file under a file", virtual.Files{"a": "", "a/b": ""}, fs.ErrExist},
		{"the root", virtual.Files{".": ""}, environment.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := virtual.New(tt.files); !errors.Is(err, tt.err) {
				t.Errorf("New = %v, want %v", err, tt.err)
			}
		})
	}
}

// TestFiles: absolute names are inside the virtual root ("/"), and
// Files shows what writes left.
func TestFiles(t *testing.T) {
	v := newEnv(t)
	ctx := t.Context()
	if got, err := v.ReadFile(ctx, "/README.md"); string(got) != "hello" || err != nil {
		t.Errorf("ReadFile(/README.md) = %q, %v", got, err)
	}
	if _, err := v.WriteFile(ctx, "/new/x.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteFile(ctx, "README.md", []byte("bye")); err != nil {
		t.Fatal(err)
	}
	want := virtual.Files{"README.md": "bye", "new/x.txt": "x", "src/main.go": "package main\n", "src/lib/a.go": "package lib\n"}
	if d := cmp.Diff(want, v.Files()); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

func TestReadOnly(t *testing.T) {
	v := newEnv(t, virtual.WithFilePolicy(environment.FilePolicy{DenyWrite: true}))
	if _, err := v.WriteFile(t.Context(), "README.md", []byte("x")); !errors.Is(err, environment.ErrDenied) {
		t.Errorf("WriteFile = %v, want ErrDenied", err)
	}
}

func TestRun(t *testing.T) {
	v := newEnv(t,
		virtual.WithCommand("go test ./...", virtual.Output{ExitCode: 1, Stdout: "FAIL 0123456789", Stderr: "oops"}),
		virtual.WithShellPolicy(environment.ShellPolicy{MaxOutputBytes: 4}))
	res, err := v.Run(t.Context(), environment.Command{Argv: []string{"go", "test", "./..."}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 1 || string(res.Stdout) != "FAIL" || res.StdoutDropped != 11 || string(res.Stderr) != "oops" {
		t.Errorf("Run = %+v", res)
	}
	if _, err := v.Run(t.Context(), environment.Command{Script: "rm -rf /"}); !errors.Is(err, environment.ErrNotSupported) {
		t.Errorf("unscripted command = %v, want ErrNotSupported", err)
	}
	allowed := newEnv(t, virtual.WithCommand("ls", virtual.Output{}), virtual.WithShellPolicy(environment.ShellPolicy{AllowedPrograms: []string{"go"}}))
	if _, err := allowed.Run(t.Context(), environment.Command{Script: "ls"}); !errors.Is(err, environment.ErrProgramNotAllowed) {
		t.Errorf("script with allowed programs = %v, want ErrProgramNotAllowed", err)
	}
}
