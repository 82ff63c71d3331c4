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

func TestFiles(t *testing.T) {
	v := newEnv(t, virtual.WithFilePolicy(environment.FilePolicy{MaxReadBytes: 12, MaxWriteBytes: 20}))
	ctx := t.Context()
	reads := []struct {
		path string
		want string
		err  error
	}{
		{"README.md", "hello", nil},
		{"/README.md", "hello", nil},
		{"src/../README.md", "hello", nil},
		{"../README.md", "", environment.ErrOutsideRoot},
		{"src", "", environment.ErrNotRegular},
		{"src/main.go", "", environment.ErrTooLarge}, // 13 bytes, cap 12
		{"nope", "", fs.ErrNotExist},
	}
	for _, r := range reads {
		got, err := v.ReadFile(ctx, r.path)
		if string(got) != r.want || !errors.Is(err, r.err) {
			t.Errorf("ReadFile(%q) = %q, %v; want %q, %v", r.path, got, err, r.want, r.err)
		}
	}
	info, err := v.WriteFile(ctx, "README.md", []byte("bye"))
	if want := (environment.WriteInfo{PreviousSize: 5, PreviousSHA256: environment.SHA256([]byte("hello"))}); err != nil || info != want {
		t.Errorf("WriteFile = %+v, %v; want %+v", info, err, want)
	}
	if info, err := v.WriteFile(ctx, "new/x.txt", []byte("x")); err != nil || !info.Created {
		t.Errorf("WriteFile(new) = %+v, %v", info, err)
	}
	for _, w := range []struct {
		path string
		data string
		err  error
	}{
		{"src", "x", environment.ErrNotRegular},
		{"README.md/x", "x", fs.ErrExist},
		{"../x", "x", environment.ErrOutsideRoot},
		{"big", "0123456789abcdefghijk", environment.ErrTooLarge},
	} {
		if _, err := v.WriteFile(ctx, w.path, []byte(w.data)); !errors.Is(err, w.err) {
			t.Errorf("WriteFile(%q) = %v, want %v", w.path, err, w.err)
		}
	}
	want := virtual.Files{"README.md": "bye", "new/x.txt": "x", "src/main.go": "package main\n", "src/lib/a.go": "package lib\n"}
	if d := cmp.Diff(want, v.Files()); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	entries, err := v.ReadDir(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name+":"+e.Type())
	}
	if d := cmp.Diff([]string{"lib:dir", "main.go:file"}, names); d != "" {
		t.Errorf("ReadDir (-want +got):\n%s", d)
	}
	if fi, err := v.Stat(ctx, "src/lib"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(src/lib) = %+v, %v", fi, err)
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
