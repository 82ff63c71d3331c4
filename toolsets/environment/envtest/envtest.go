// Package envtest is the conformance suite of environment providers:
// what every [environment.FileSystem] and [environment.Shell] must do,
// whatever it is backed by. Each provider's tests run it:
//
//	func TestConformance(t *testing.T) {
//		envtest.TestFileSystem(t, func(t *testing.T, files map[string]string, p environment.FilePolicy) environment.FileSystem { … })
//	}
package envtest

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/weft-run/weft/toolsets/environment"
)

// NewFileSystem returns a provider holding files (path → content,
// directories implied) under policy.
type NewFileSystem func(t *testing.T, files map[string]string, policy environment.FilePolicy) environment.FileSystem

// NewShell returns a provider under policy that can run `echo ok` (as
// argv {"echo", "ok"}) and prints "ok\n".
type NewShell func(t *testing.T, policy environment.ShellPolicy) environment.Shell

var tree = map[string]string{"README.md": "hello", "src/main.go": "package main\n", "src/lib/a.go": "package lib\n"}

// TestFileSystem runs the file conformance cases against newFS.
func TestFileSystem(t *testing.T, newFS NewFileSystem) {
	t.Run("read", func(t *testing.T) {
		fsys := newFS(t, tree, environment.FilePolicy{MaxReadBytes: 12})
		for _, tt := range []struct {
			path, want string
			err        error
		}{
			{"README.md", "hello", nil},
			{"src/../README.md", "hello", nil},
			{"../README.md", "", environment.ErrOutsideRoot},
			{"src/../../x", "", environment.ErrOutsideRoot},
			{"src", "", environment.ErrNotRegular},
			{"src/main.go", "", environment.ErrTooLarge}, // 13 bytes, cap 12
			{"nope", "", fs.ErrNotExist},
			{"a\x00", "", environment.ErrInvalidPath},
		} {
			got, err := fsys.ReadFile(t.Context(), tt.path)
			if string(got) != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("ReadFile(%q) = %q, %v; want %q, %v", tt.path, got, err, tt.want, tt.err)
			}
			var pe *environment.PathError
			if err != nil && (!errors.As(err, &pe) || pe.Path != tt.path) {
				t.Errorf("ReadFile(%q): %v is not a PathError naming the path", tt.path, err)
			}
		}
	})
	t.Run("write", func(t *testing.T) {
		fsys := newFS(t, tree, environment.FilePolicy{MaxWriteBytes: 10})
		info, err := fsys.WriteFile(t.Context(), "README.md", []byte("bye"))
		if want := (environment.WriteInfo{PreviousSize: 5, PreviousSHA256: environment.SHA256([]byte("hello"))}); err != nil || info != want {
			t.Errorf("replace: %+v, %v; want %+v", info, err, want)
		}
		if info, err := fsys.WriteFile(t.Context(), "new/dir/x.txt", []byte("x")); err != nil || info != (environment.WriteInfo{Created: true}) {
			t.Errorf("create: %+v, %v", info, err)
		}
		for path, want := range map[string]string{"README.md": "bye", "new/dir/x.txt": "x"} {
			if got, err := fsys.ReadFile(t.Context(), path); string(got) != want || err != nil {
				t.Errorf("read back %q = %q, %v; want %q", path, got, err, want)
			}
		}
		for _, tt := range []struct {
			path, data string
			err        error
		}{
			{"src", "x", environment.ErrNotRegular},
			{".", "x", environment.ErrNotRegular},
			{"README.md/x", "x", fs.ErrExist},
			{"../x", "x", environment.ErrOutsideRoot},
			{"big", "0123456789a", environment.ErrTooLarge},
		} {
			if _, err := fsys.WriteFile(t.Context(), tt.path, []byte(tt.data)); !errors.Is(err, tt.err) {
				t.Errorf("WriteFile(%q) = %v, want %v", tt.path, err, tt.err)
			}
		}
	})
	t.Run("denied", func(t *testing.T) {
		fsys := newFS(t, tree, environment.FilePolicy{DenyRead: true, DenyWrite: true})
		if _, err := fsys.ReadFile(t.Context(), "README.md"); !errors.Is(err, environment.ErrDenied) {
			t.Errorf("read = %v, want ErrDenied", err)
		}
		if _, err := fsys.WriteFile(t.Context(), "README.md", nil); !errors.Is(err, environment.ErrDenied) {
			t.Errorf("write = %v, want ErrDenied", err)
		}
		if _, err := fsys.ReadDir(t.Context(), "."); err != nil {
			t.Errorf("listing under DenyRead = %v", err)
		}
	})
	t.Run("list and stat", func(t *testing.T) {
		fsys := newFS(t, tree, environment.FilePolicy{})
		entries, err := fsys.ReadDir(t.Context(), "src")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name+":"+e.Type())
		}
		if len(got) != 2 || got[0] != "lib:dir" || got[1] != "main.go:file" {
			t.Errorf("ReadDir(src) = %v", got)
		}
		if _, err := fsys.ReadDir(t.Context(), "../"); !errors.Is(err, environment.ErrOutsideRoot) {
			t.Errorf("ReadDir(../) = %v", err)
		}
		if fi, err := fsys.Stat(t.Context(), "src/main.go"); err != nil || fi.Size != 13 || fi.Type() != "file" || fi.Name != "main.go" {
			t.Errorf("Stat = %+v, %v", fi, err)
		}
		if fi, err := fsys.Stat(t.Context(), ""); err != nil || !fi.IsDir() {
			t.Errorf("Stat(root) = %+v, %v", fi, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		fsys := newFS(t, tree, environment.FilePolicy{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := fsys.ReadFile(ctx, "README.md"); err == nil {
			t.Error("a read with a cancelled context ran")
		}
	})
}

// TestShellPolicy runs the shell policy's conformance cases: what any
// provider refuses before a command starts.
func TestShellPolicy(t *testing.T, newShell NewShell) {
	echo := environment.Command{Argv: []string{"echo", "ok"}}
	for _, tt := range []struct {
		name   string
		policy environment.ShellPolicy
		cmd    environment.Command
		err    error
	}{
		{"allowed", environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, echo, nil},
		{"denied", environment.ShellPolicy{Deny: true}, echo, environment.ErrDenied},
		{"not listed", environment.ShellPolicy{AllowedPrograms: []string{"git"}}, echo, environment.ErrProgramNotAllowed},
		{"script while programs are listed", environment.ShellPolicy{AllowedPrograms: []string{"echo"}}, environment.Command{Script: "echo ok"}, environment.ErrProgramNotAllowed},
		{"empty", environment.ShellPolicy{}, environment.Command{}, environment.ErrInvalidCommand},
		{"dir outside", environment.ShellPolicy{}, environment.Command{Argv: echo.Argv, Dir: "../"}, environment.ErrOutsideRoot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newShell(t, tt.policy).Run(t.Context(), tt.cmd)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Run = %+v, %v; want %v", res, err, tt.err)
			}
			var ce *environment.CommandError
			if err != nil && !errors.As(err, &ce) {
				t.Errorf("%v is not a CommandError", err)
			}
			if err == nil && (string(res.Stdout) != "ok\n" || res.ExitCode != 0) {
				t.Errorf("Run = %+v", res)
			}
		})
	}
}
