package weft

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DataDirLockFile is the name of the lock file in a data directory. It
// holds the decimal pid of the process that holds the lock.
const DataDirLockFile = "weft.lock"

// ErrDataDirLocked: another process (or another Runtime of this process)
// holds the data directory's lock. The error is a *DataDirLockedError.
var ErrDataDirLocked = errors.New("weft: data directory in use")

// DataDirLockedError says who holds a data directory's lock. It matches
// ErrDataDirLocked with errors.Is.
type DataDirLockedError struct {
	Dir string
	// PID is the holder's process id as its lock file says, 0 when the
	// file does not say (yet).
	PID int
}

func (e *DataDirLockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
		if e.PID == os.Getpid() {
			holder += " (this process)"
		}
	}
	return fmt.Sprintf("data directory %s is in use by %s: one process at a time may open it", e.Dir, holder)
}

func (e *DataDirLockedError) Is(target error) bool { return target == ErrDataDirLocked }

// DataDirLock is the lock a process holds on a data directory while it
// uses it; Release gives it up. The operating system releases it too when
// the process ends, however it ends (a crash, SIGKILL), so a stale lock
// file never keeps a directory locked.
type DataDirLock struct {
	f   *os.File
	dir string
}

// LockDataDir takes the lock of data directory dir (creating dir when it
// does not exist) without waiting, and writes this process's pid into its
// lock file. Start takes it for Config.DataDir, and the weft command for
// every data directory it opens (weft serve, and read-only commands with
// --data while they read), so that two writers never share a log: a
// second one would lose acknowledged events.
//
// The lock is an exclusive flock(2) on DataDirLockFile on Linux and the
// BSDs (macOS included): it is per open file, so a second LockDataDir in
// the same process is refused too. On other systems LockDataDir writes the
// pid file but locks nothing (see lockFile). Errors: a *DataDirLockedError
// (ErrDataDirLocked) naming the holder's pid when another holds it, or the
// failure to create the directory or the file.
func LockDataDir(dir string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("weft: lock data directory: %w", err)
	}
	path := filepath.Join(dir, DataDirLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("weft: lock data directory: %w", err)
	}
	held, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("weft: lock data directory %s: %w", dir, err)
	}
	if !held {
		f.Close()
		return nil, &DataDirLockedError{Dir: dir, PID: readPID(path)}
	}
	if err := writePID(f); err != nil {
		f.Close() // closing releases the lock
		return nil, fmt.Errorf("weft: lock data directory %s: %w", dir, err)
	}
	return &DataDirLock{f: f, dir: dir}, nil
}

// Dir returns the locked directory.
func (l *DataDirLock) Dir() string { return l.dir }

// Release gives the lock up. The lock file stays (a later LockDataDir
// reuses it). Release is idempotent; a nil lock releases nothing.
func (l *DataDirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Empty the pid first, so that nobody names a process that is gone.
	_ = f.Truncate(0)
	return f.Close()
}

// writePID replaces the lock file's content with this process's pid.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// readPID reads the pid in the lock file at path, 0 when it holds none.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
