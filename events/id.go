package events

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/google/uuid"
)

// NewID returns a new event id: a UUIDv7 (RFC 9562) laid out as
// uuid.NewV7 lays it out (48 bits of Unix milliseconds, then a 12-bit
// sub-millisecond sequence, then 62 random bits), increasing within the
// process. Unlike uuid.NewV7 it allocates nothing (its random bytes come
// from crypto/rand.Read into the id itself), which matters on the
// runtime's append path: a run builds about a dozen events.
func NewID() uuid.UUID {
	var u uuid.UUID
	rand.Read(u[:]) // crypto/rand.Read does not fail (it aborts the program)
	ms, seq := v7Time()
	u[0] = byte(ms >> 40)
	u[1] = byte(ms >> 32)
	u[2] = byte(ms >> 24)
	u[3] = byte(ms >> 16)
	u[4] = byte(ms >> 8)
	u[5] = byte(ms)
	u[6] = 0x70 | (0x0F & byte(seq>>8))
	u[7] = byte(seq)
	u[8] = (u[8] & 0x3f) | 0x80 // variant RFC 9562
	return u
}

var (
	v7Mu   sync.Mutex
	v7Last int64 // the last (ms << 12 | seq) given out
)

// v7Time returns the milliseconds and sequence of the next id, as
// uuid.NewV7 computes them: the sequence is the sub-millisecond time in
// units of 256 ns, bumped past the last one given out.
func v7Time() (ms, seq int64) {
	const nanoPerMilli = 1_000_000
	nano := time.Now().UnixNano()
	ms = nano / nanoPerMilli
	seq = (nano - ms*nanoPerMilli) >> 8
	now := ms<<12 + seq
	v7Mu.Lock()
	if now <= v7Last {
		now = v7Last + 1
	}
	v7Last = now
	v7Mu.Unlock()
	return now >> 12, now & 0xfff
}
