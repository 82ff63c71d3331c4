//go:build unix

package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
)

// tree builds <tmp>/root and <tmp>/outside and returns the provider of
// root and the two host paths. Inside the root: a.txt, sub/b.txt, d/x.txt,
// a link to a.txt, links that leave the root (relative, absolute, a
// directory) and a FIFO. Outside: secret.txt.
func tree(t *testing.T, opts ...local.Option) (*local.Provider, string, string) {
	t.Helper()
	tmp := t.TempDir()
	root, outside := filepath.Join(tmp, "root"), filepath.Join(tmp, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub"), filepath.Join(root, "d")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	for name, content := range map[string]string{
		filepath.Join(root, "a.txt"): "inside", filepath.Join(root, "sub", "b.txt"): "b",
		filepath.Join(root, "d", "x.txt"): "inside-d", filepath.Join(outside, "secret.txt"): "OUTSIDE",
		filepath.Join(outside, "x.txt"): "OUTSIDE",
	} {
		must(t, os.WriteFile(name, []byte(content), 0o644))
	}
	must(t, os.Symlink("a.txt", filepath.Join(root, "link_in")))
	must(t, os.Symlink("../outside/secret.txt", filepath.Join(root, "link_out")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link_abs")))
	must(t, os.Symlink("../outside", filepath.Join(root, "dirlink_out")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	p, err := local.New(root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, p.Root(), outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadConfinement(t *testing.T) {
	p, root, outside := tree(t)
	tests := []struct {
		name string
		path string
		want string
		err  error
	}{
		{"plain", "a.txt", "inside", nil},
		{"nested", "sub/b.txt", "b", nil},
		{"dot dot inside", "sub/../a.txt", "inside", nil},
		{"absolute inside", filepath.Join(root, "a.txt"), "inside", nil},
		{"link inside", "link_in", "inside", nil},
		{"dot dot out", "../outside/secret.txt", "", environment.ErrOutsideRoot},
		{"dot dot out from a subdirectory", "sub/../../outside/secret.txt", "", environment.ErrOutsideRoot},
		{"absolute outside", filepath.Join(outside, "secret.txt"), "", environment.ErrOutsideRoot},
		{"relative link out", "link_out", "", environment.ErrOutsideRoot},
		{"absolute link out", "link_abs", "", environment.ErrOutsideRoot},
		{"through a directory link out", "dirlink_out/secret.txt", "", environment.ErrOutsideRoot},
		{"fifo", "fifo", "", environment.ErrNotRegular},
		{"directory", "sub", "", environment.ErrNotRegular},
		{"missing", "nope.txt", "", fs.ErrNotExist},
		{"nul byte", "a\x00b", "", environment.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.ReadFile(t.Context(), tt.path)
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("ReadFile(%q) = %q, %v; want %q, %v", tt.path, got, err, tt.want, tt.err)
			}
			var pe *environment.PathError
			if err != nil && (!errors.As(err, &pe) || pe.Path != tt.path) {
				t.Errorf("error %v is not a PathError naming %q", err, tt.path)
			}
		})
	}
}

// TestReadDevice needs the right to create a device node (root).
func TestReadDevice(t *testing.T) {
	p, root, _ := tree(t)
	// 1:3 is /dev/null.
	if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot create a device node here (%v); run as root to cover device files", err)
	}
	for _, op := range []string{"read", "write"} {
		var err error
		if op == "read" {
			_, err = p.ReadFile(t.Context(), "null")
		} else {
			_, err = p.WriteFile(t.Context(), "null", []byte("x"))
		}
		if !errors.Is(err, environment.ErrNotRegular) {
			t.Errorf("%s of a device = %v, want ErrNotRegular", op, err)
		}
	}
}

func TestWriteConfinement(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		err     error
		created bool
		prev    string // previous content, when replaced
	}{
		{name: "new file in new directories", path: "new/dir/c.txt", created: true},
		{name: "replace", path: "a.txt", prev: "inside"},
		{name: "link inside", path: "link_in", err: environment.ErrSymlink},
		{name: "link out", path: "link_out", err: environment.ErrSymlink},
		{name: "through a directory link", path: "dirlink_out/new.txt", err: environment.ErrSymlink},
		{name: "dot dot out", path: "../outside/new.txt", err: environment.ErrOutsideRoot},
		{name: "fifo", path: "fifo", err: environment.ErrNotRegular},
		{name: "directory", path: "sub", err: environment.ErrNotRegular},
		{name: "the root", path: ".", err: environment.ErrNotRegular},
		{name: "under a file", path: "a.txt/x", err: fs.ErrExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, root, outside := tree(t)
			info, err := p.WriteFile(t.Context(), tt.path, []byte("new"))
			if !errors.Is(err, tt.err) {
				t.Fatalf("WriteFile(%q) = %v, want %v", tt.path, err, tt.err)
			}
			for _, f := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(root, "a.txt")} {
				b, _ := os.ReadFile(f)
				if tt.err != nil && string(b) != map[bool]string{true: "OUTSIDE", false: "inside"}[f != filepath.Join(root, "a.txt")] {
					t.Errorf("%s changed to %q by a refused write", f, b)
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
				t.Error("a file was created outside the root")
			}
			if tt.err != nil {
				return
			}
			got, err := p.ReadFile(t.Context(), tt.path)
			if err != nil || string(got) != "new" {
				t.Fatalf("read back %q, %v", got, err)
			}
			want := environment.WriteInfo{Created: tt.created}
			if !tt.created {
				want.PreviousSize, want.PreviousSHA256 = int64(len(tt.prev)), environment.SHA256([]byte(tt.prev))
			}
			if info != want {
				t.Errorf("WriteInfo = %+v, want %+v", info, want)
			}
			leftovers, _ := filepath.Glob(filepath.Join(root, "*", ".*.tmp"))
			if more, _ := filepath.Glob(filepath.Join(root, ".*.tmp")); len(leftovers)+len(more) > 0 {
				t.Errorf("temporary files left: %v %v", leftovers, more)
			}
		})
	}
}

func TestSizeCapsAndDenials(t *testing.T) {
	tests := []struct {
		name   string
		policy environment.FilePolicy
		read   error
		write  error
	}{
		{name: "defaults", policy: environment.FilePolicy{}},
		{name: "read cap", policy: environment.FilePolicy{MaxReadBytes: 5}, read: environment.ErrTooLarge},
		{name: "write cap", policy: environment.FilePolicy{MaxWriteBytes: 2}, write: environment.ErrTooLarge},
		{name: "read only", policy: environment.FilePolicy{DenyWrite: true}, write: environment.ErrDenied},
		{name: "no reads", policy: environment.FilePolicy{DenyRead: true}, read: environment.ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := tree(t, local.WithFilePolicy(tt.policy))
			if _, err := p.ReadFile(t.Context(), "a.txt"); !errors.Is(err, tt.read) { // "inside": 6 bytes
				t.Errorf("read = %v, want %v", err, tt.read)
			}
			if _, err := p.WriteFile(t.Context(), "w.txt", []byte("abc")); !errors.Is(err, tt.write) {
				t.Errorf("write = %v, want %v", err, tt.write)
			}
		})
	}
}

func TestReadDir(t *testing.T) {
	p, _, _ := tree(t)
	got, err := p.ReadDir(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, e := range got {
		types[e.Name] = e.Type()
	}
	want := map[string]string{"a.txt": "file", "sub": "dir", "d": "dir", "link_in": "symlink", "link_out": "symlink",
		"link_abs": "symlink", "dirlink_out": "symlink", "fifo": "other"}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s: type %q, want %q (all: %v)", k, types[k], v, types)
		}
	}
	if _, err := p.ReadDir(t.Context(), "dirlink_out"); !errors.Is(err, environment.ErrOutsideRoot) {
		t.Errorf("ReadDir(dirlink_out) = %v, want ErrOutsideRoot", err)
	}
	if _, err := p.ReadDir(t.Context(), "fifo"); !errors.Is(err, environment.ErrNotRegular) {
		t.Errorf("ReadDir(fifo) = %v, want ErrNotRegular", err)
	}
}

// TestSwapBetweenCheckAndUse races a goroutine that swaps the directory d
// for a link to the outside directory (and back) against reads and
// writes of d/x.txt: no read returns the outside file, no write lands
// outside, and every failure is a refusal or a missing file.
func TestSwapBetweenCheckAndUse(t *testing.T) {
	p, root, outside := tree(t)
	d, real := filepath.Join(root, "d"), filepath.Join(root, "d.real")
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if os.Rename(d, real) != nil {
				continue
			}
			if os.Symlink(outside, d) == nil {
				swaps.Add(1)
			}
			// Remove the link, or a directory a write made meanwhile, until
			// the real directory is back.
			for os.RemoveAll(d) != nil || os.Rename(real, d) != nil {
			}
		}
	})
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	var refused, ok int
	for i := range 20000 {
		b, err := p.ReadFile(t.Context(), "d/x.txt")
		switch {
		case err == nil && string(b) == "inside-d":
			ok++
		case err == nil:
			t.Fatalf("read %q through a swapped link", b)
		case errors.Is(err, environment.ErrOutsideRoot), errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			refused++ // a refusal, or the path caught mid-swap
		default:
			t.Fatalf("read: unexpected error %v", err)
		}
		if i%50 != 0 {
			continue
		}
		_, err = p.WriteFile(t.Context(), "d/w.txt", []byte("w"))
		if err != nil && !errors.Is(err, environment.ErrOutsideRoot) && !errors.Is(err, environment.ErrSymlink) &&
			!errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("write: unexpected error %v", err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if _, err := os.Stat(filepath.Join(outside, "w.txt")); err == nil {
		t.Fatal("a write through the swapped link landed outside the root")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "x.txt")); string(b) != "OUTSIDE" {
		t.Fatalf("outside file changed: %q", b)
	}
	t.Logf("%d swaps, %d reads inside, %d refused", swaps.Load(), ok, refused)
}
