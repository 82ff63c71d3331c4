package environment

import (
	"path"
	"path/filepath"
	"strings"
)

// Clean checks name lexically against root and returns it as a clean
// slash-separated path relative to root ("." for the root itself).
//
// root is the provider's root as an absolute host path ("/" for the
// virtual provider). A relative name must not climb above the root with
// ".."; an absolute name must lie inside root and is made relative. Any
// other name fails with [ErrOutsideRoot]; a name with a NUL byte with
// [ErrInvalidPath]. Clean does not look at the filesystem: symbolic
// links are the provider's to check.
func Clean(root, name string) (string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", ErrInvalidPath
	}
	if name == "" {
		return ".", nil
	}
	if path.IsAbs(name) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(filepath.FromSlash(name)))
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return "", ErrOutsideRoot
		}
		name = filepath.ToSlash(rel)
	}
	c := path.Clean(name)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrOutsideRoot
	}
	return c, nil
}
