package events

import (
	"context"
	"iter"
)

// Store is the port every event-log backend implements.
//
// All methods are safe for concurrent use. Methods that take a context block
// until the operation completes or the context is done.
type Store interface {
	Appender
	Reader
	Subscriber
	// Close releases the backend's resources. It does not close a bus
	// connection or server that the caller passed in. Close is idempotent.
	Close() error
}

// Appender writes events.
type Appender interface {
	// Append writes evs to the end of stream as one all-or-nothing batch,
	// if the stream is at the expected version.
	//
	// The store assigns Stream, Version and Position. It fills ID (a new
	// UUIDv7), Time (now, UTC) and SchemaVersion (the catalogue's current
	// version for the type) when they are zero; callers that want retries
	// to be idempotent set ID themselves (see New).
	//
	// Errors: ErrInvalidStream for a name ValidateStream rejects;
	// ErrWrongExpectedVersion (as a *WrongVersionError) when the stream is
	// not at expected; ErrPayloadTooLarge when an event's Data exceeds the
	// backend's limit (for a backend with a blob store, Data above its
	// inline limit goes to the blob store and the limit is much higher: see
	// "Large payloads" in blob.go); ErrEmptyAppend for no events; ErrInvalidEvent for an
	// event without a Type. Nothing is written when an error is returned.
	Append(ctx context.Context, stream string, expected ExpectedVersion, evs ...Event) (AppendResult, error)
}

// Reader reads stored events.
type Reader interface {
	// ReadStream returns the events of stream with Version >= from, in
	// version order. from 0 and 1 both mean the whole stream. It returns
	// ErrStreamNotFound for a stream that has no events, and an error
	// wrapping a *PoisonError for a stream that holds a stored message
	// that is not a weft event (the stream is damaged).
	ReadStream(ctx context.Context, stream string, from uint64) ([]Event, error)

	// ReadAll yields every event with Position > after in global order,
	// then ends. Breaking out of the loop stops the read. An error ends the
	// sequence with that error as its last element, except an error
	// wrapping a *PoisonError (ErrPoison): a stored message that is not a
	// weft event, yielded with an Event that has only its Stream (when
	// known) and Position, after which the sequence goes on. Consumers
	// quarantine it (record it and skip it) or stop.
	ReadAll(ctx context.Context, after uint64) iter.Seq2[Event, error]
}

// Subscriber follows the log.
type Subscriber interface {
	// Subscribe yields every event with Position > after in global order:
	// first those already stored (catch-up), then each new one as it is
	// appended (live), with no gap and no duplicate between the two phases.
	// It blocks waiting for new events and ends when ctx is done (yielding
	// ctx.Err() as its last element), when the loop breaks, or on a backend
	// error. A consumer checkpoints Event.Position and passes it as after to
	// resume. Poison is yielded as by ReadAll, and the sequence goes on.
	Subscribe(ctx context.Context, after uint64) iter.Seq2[Event, error]
}

// AppendResult says where a successful append put its events.
type AppendResult struct {
	// FirstVersion and LastVersion are the versions of the first and last
	// appended event; LastVersion is the expected version for the next
	// append to the same stream.
	FirstVersion uint64 `json:"first_version"`
	LastVersion  uint64 `json:"last_version"`
	// LastPosition is the global position of the last appended event.
	LastPosition uint64 `json:"last_position"`
	// Duplicate is true when every event was already stored (an idempotent
	// re-append) and nothing was written.
	Duplicate bool `json:"duplicate,omitempty"`
	// Blobs, by index of the appended events, are the references of the
	// events whose Data the store kept in its blob store (see "Large
	// payloads" in blob.go): a caller that keeps the appended events sets
	// their Blob from it, so that Hash gives the stored events' hashes.
	// Nil when every event was stored inline (and for a duplicate).
	Blobs []*BlobRef `json:"blobs,omitempty"`
	// Hashes, by index of the appended events, are the events' Hash as
	// stored (for a duplicate, the stored events' hashes): Hashes[i] is
	// the PrevHash of event i+1, and the last is the stream's head, so
	// that a caller that keeps the appended events need not hash them
	// again. Every backend sets it on success.
	Hashes []string `json:"hashes,omitempty"`
}
