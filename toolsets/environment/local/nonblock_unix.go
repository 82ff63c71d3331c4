//go:build unix

package local

import "syscall"

// nonblock opens without blocking: a FIFO's open would wait for a writer.
const nonblock = syscall.O_NONBLOCK
