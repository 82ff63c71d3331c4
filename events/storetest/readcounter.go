package storetest

import (
	"context"
	"iter"
	"sync/atomic"

	"github.com/weft-run/weft/events"
)

// ReadCounter is an events.Store that counts its reads of the whole log
// (ReadAll), for the tests that check how often something reads it, such
// as a start-up that should read it once.
type ReadCounter struct {
	events.Store
	reads atomic.Int32
}

// ReadAll counts the read and reads the store's log.
func (s *ReadCounter) ReadAll(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	s.reads.Add(1)
	return s.Store.ReadAll(ctx, after)
}

// Reads returns how many reads of the whole log were made since the last
// Reset.
func (s *ReadCounter) Reads() int { return int(s.reads.Load()) }

// Reset sets the count back to zero.
func (s *ReadCounter) Reset() { s.reads.Store(0) }
