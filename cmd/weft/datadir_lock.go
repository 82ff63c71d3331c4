package main

import (
	"errors"
	"fmt"

	"github.com/weft-run/weft"
)

// errNodeRunning: a read-only command with --data found the data directory
// locked by a running node; it reads that node's log with --nats instead.
var errNodeRunning = errors.New("a running node holds the data directory")

// lockToRead takes the lock of the data directory dir for a read-only
// command (--data), so that no node starts on it while the command reads.
// A directory a running node holds is an error matching errNodeRunning
// and weft.ErrDataDirLocked that names the node's pid and says to use
// --nats.
func lockToRead(dir string) (*weft.DataDirLock, error) {
	lock, err := weft.LockDataDir(dir)
	var held *weft.DataDirLockedError
	if errors.As(err, &held) {
		pid := "its pid is not recorded"
		if held.PID > 0 {
			pid = fmt.Sprintf("pid %d", held.PID)
		}
		return nil, fmt.Errorf("%w (%s): read its log over NATS with --nats URL instead of --data %s: %w", errNodeRunning, pid, dir, err)
	}
	return lock, err
}
