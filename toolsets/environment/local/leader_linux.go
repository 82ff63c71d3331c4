package local

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// waitid arguments (linux/wait.h).
const (
	pPID    = 1
	wEXITED = 0x4
	wNOWAIT = 0x1000000
)

// watchLeader returns a channel closed when c's process has exited, and
// the function that reaps it. The process is left a zombie until reap,
// so its process group id cannot be reused while the group is signalled.
func watchLeader(c *exec.Cmd) (<-chan struct{}, func() error) {
	exited := make(chan struct{})
	pid := c.Process.Pid
	go func() {
		defer close(exited)
		var info [128]byte // siginfo_t
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), wEXITED|wNOWAIT, 0, 0)
			if e != syscall.EINTR {
				return // exited, or not waitable (ECHILD): reap reports it
			}
		}
	}()
	return exited, c.Wait
}
