//go:build !unix

package local

// nonblock is not needed where there are no FIFOs to open.
const nonblock = 0
