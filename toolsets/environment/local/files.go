package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/weft-run/weft/toolsets/environment"
)

// clean checks ctx and name and returns name relative to the root.
func (l *Provider) clean(ctx context.Context, op, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", &environment.PathError{Op: op, Path: name, Err: err}
	}
	c, err := environment.Clean(l.path, name)
	if err != nil {
		return "", &environment.PathError{Op: op, Path: name, Err: err}
	}
	return c, nil
}

func info(name string, fi fs.FileInfo) environment.FileInfo {
	return environment.FileInfo{Name: name, Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
}

// Stat describes name, following links that stay inside the root.
func (l *Provider) Stat(ctx context.Context, name string) (environment.FileInfo, error) {
	c, err := l.clean(ctx, "stat", name)
	if err != nil {
		return environment.FileInfo{}, err
	}
	fi, err := l.root.Stat(c)
	if err != nil {
		return environment.FileInfo{}, l.fail("stat", name, err)
	}
	return info(path.Base(c), fi), nil
}

// ReadDir lists the directory name; links among its entries are
// reported, not followed.
func (l *Provider) ReadDir(ctx context.Context, name string) ([]environment.FileInfo, error) {
	c, err := l.clean(ctx, "list", name)
	if err != nil {
		return nil, err
	}
	f, err := l.open(c, true)
	if err != nil {
		return nil, l.fail("list", name, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, l.fail("list", name, err)
	}
	out := make([]environment.FileInfo, 0, len(entries))
	for _, e := range entries {
		// Lstat through the root, not through the directory's host path,
		// which a swapped link could redirect.
		fi, err := l.root.Lstat(path.Join(c, e.Name()))
		if err != nil {
			continue // removed since the listing
		}
		out = append(out, info(e.Name(), fi))
	}
	slices.SortFunc(out, func(a, b environment.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// open opens c for reading without blocking (a FIFO swapped in must not
// hang the open) and checks on the open file that it is a directory
// (dir) or a regular file.
func (l *Provider) open(c string, dir bool) (*os.File, error) {
	// Refuse what is not a file (or directory) before opening it: opening
	// a device may act on it. The check on the open file below is the
	// one that holds if the name changes in between.
	if fi, err := l.root.Stat(c); err != nil {
		return nil, err
	} else if err := want(fi, dir); err != nil {
		return nil, err
	}
	f, err := l.root.OpenFile(c, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := want(fi, dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// want refuses fi unless it is a directory (dir) or a regular file.
func want(fi fs.FileInfo, dir bool) error {
	switch {
	case dir && !fi.IsDir():
		return fmt.Errorf("%w: not a directory", environment.ErrNotRegular)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: a %s", environment.ErrNotRegular, kind(fi.Mode()))
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// ReadFile returns the content of the regular file name.
func (l *Provider) ReadFile(ctx context.Context, name string) ([]byte, error) {
	c, err := l.clean(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	if err := l.files.CheckRead(0); err != nil {
		return nil, l.fail("read", name, err)
	}
	f, err := l.open(c, false)
	if err != nil {
		return nil, l.fail("read", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, l.fail("read", name, err)
	}
	if err := l.files.CheckRead(fi.Size()); err != nil {
		return nil, l.fail("read", name, err)
	}
	// The file may grow while it is read: never read past the cap.
	limit := l.files.ReadLimit()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, l.fail("read", name, err)
	}
	if int64(len(b)) > limit {
		return nil, l.fail("read", name, l.files.CheckRead(int64(len(b))))
	}
	return b, nil
}

// WriteFile replaces or creates the regular file name with data.
func (l *Provider) WriteFile(ctx context.Context, name string, data []byte) (environment.WriteInfo, error) {
	c, err := l.clean(ctx, "write", name)
	if err != nil {
		return environment.WriteInfo{}, err
	}
	fail := func(err error) (environment.WriteInfo, error) {
		return environment.WriteInfo{}, l.fail("write", name, err)
	}
	if err := l.files.CheckWrite(int64(len(data))); err != nil {
		return fail(err)
	}
	if c == "." {
		return fail(fmt.Errorf("%w: the root is a directory", environment.ErrNotRegular))
	}
	if err := l.noLinks(c); err != nil {
		return fail(err)
	}
	wi, mode, err := l.previous(c)
	if err != nil {
		return fail(err)
	}
	dir := path.Dir(c)
	if err := l.root.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	tmp := path.Join(dir, "."+path.Base(c)+".weft-"+randomSuffix()+".tmp")
	f, err := l.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fail(err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// Rename replaces the directory entry: a link swapped in at
		// name since noLinks is replaced, not written through.
		werr = l.root.Rename(tmp, c)
	}
	if werr != nil {
		_ = l.root.Remove(tmp)
		return fail(werr)
	}
	return wi, nil
}

// noLinks refuses c when it, or a directory on the way to it, is a
// symbolic link. Missing components are fine (the write creates them).
func (l *Provider) noLinks(c string) error {
	parts := strings.Split(c, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := l.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %q is a symbolic link", environment.ErrSymlink, p)
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return fmt.Errorf("%w: %q is not a directory", fs.ErrExist, p)
		}
	}
	return nil
}

// previous describes the file a write to c replaces, and the mode the
// new file gets (the old one's permissions, else 0644).
func (l *Provider) previous(c string) (environment.WriteInfo, fs.FileMode, error) {
	fi, err := l.root.Lstat(c)
	if errors.Is(err, fs.ErrNotExist) {
		return environment.WriteInfo{Created: true}, 0o644, nil
	}
	if err != nil {
		return environment.WriteInfo{}, 0, err
	}
	if !fi.Mode().IsRegular() {
		return environment.WriteInfo{}, 0, fmt.Errorf("%w: a %s", environment.ErrNotRegular, kind(fi.Mode()))
	}
	wi := environment.WriteInfo{PreviousSize: fi.Size()}
	if fi.Size() <= l.files.ReadLimit() {
		if f, err := l.open(c, false); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, io.LimitReader(f, l.files.ReadLimit())); err == nil {
				wi.PreviousSHA256 = hex.EncodeToString(h.Sum(nil))
			}
			f.Close()
		}
	}
	return wi, fi.Mode().Perm(), nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
