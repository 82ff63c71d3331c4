package environment

import (
	"bytes"
	"sync"
)

// Capture keeps the first Max bytes written to it and counts the rest. It
// never fails a write, so a process writing past the cap is not stopped
// by a broken pipe; the providers capture each output stream in one. It
// is safe for concurrent use.
type Capture struct {
	max int64

	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int64
}

// NewCapture returns a capture that keeps max bytes (at least 0).
func NewCapture(max int64) *Capture { return &Capture{max: max} }

// Write keeps what fits under the cap and counts the rest; it always
// reports len(p) written.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := max(c.max-int64(c.buf.Len()), 0)
	keep := min(int64(len(p)), room)
	c.buf.Write(p[:keep])
	c.dropped += int64(len(p)) - keep
	return len(p), nil
}

// Result returns a copy of the bytes kept and the count dropped.
func (c *Capture) Result() ([]byte, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes()), c.dropped
}
