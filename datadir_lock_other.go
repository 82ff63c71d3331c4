//go:build !unix || solaris || aix

package weft

import "os"

// lockFile does not lock on systems without flock(2) (Windows, Plan 9,
// Solaris, AIX, WebAssembly): the documented limit of LockDataDir there is
// that nothing stops a second process on the same data directory.
func lockFile(*os.File) (bool, error) { return true, nil }
