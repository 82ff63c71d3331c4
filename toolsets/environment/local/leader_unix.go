//go:build unix && !linux

package local

import "os/exec"

// watchLeader returns a channel closed when c's process has exited and
// been reaped, and the function that returns the wait's error. Without
// waitid's WNOWAIT the leader is reaped before its group is signalled.
func watchLeader(c *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	var err error
	go func() {
		defer close(exited)
		err = c.Wait()
	}()
	return exited, func() error { <-exited; return err }
}
