package events

import "context"

// NewStreamer is implemented by stores that read a stream's head before
// its first append (the JetStream store): NewStream tells the store that
// stream has no events — its caller made the name just now from fresh
// random bits — so that an append to it at NoStream builds on that
// instead of reading the head. The append is still fenced: when the
// stream has events after all, the store refuses it with its usual
// *WrongVersionError.
type NewStreamer interface {
	NewStream(stream string)
}

// StepAppender is implemented by stores that append a sequence of events
// faster when the sequence need not be all or nothing: the JetStream store
// on a single-replica file stream, whose all-or-nothing batches cost
// milliseconds, pipelines it in one round trip instead.
type StepAppender interface {
	// AppendSteps appends evs to the end of stream, in order, if the
	// stream is at the expected version, as Append does (same checks, same
	// errors, same idempotency and hash chain), except that it is not all
	// or nothing: every prefix of evs is a possible outcome. The stored
	// events are always a prefix of evs at consecutive versions, never
	// events of evs with another writer's events between them. On an
	// error, the result reports the prefix that is stored (LastVersion 0
	// when none is); on a context error or a lost connection, events after
	// the reported prefix may be stored too, as an Append's may.
	AppendSteps(ctx context.Context, stream string, expected ExpectedVersion, evs ...Event) (AppendResult, error)
}

// AppendSteps appends evs to stream with a's AppendSteps when a is a
// StepAppender, and otherwise with Append, whose all or nothing is one of
// the outcomes AppendSteps allows. Callers use it for sequences of which
// every prefix is a state they carry on from.
func AppendSteps(ctx context.Context, a Appender, stream string, expected ExpectedVersion, evs ...Event) (AppendResult, error) {
	if s, ok := a.(StepAppender); ok {
		return s.AppendSteps(ctx, stream, expected, evs...)
	}
	return a.Append(ctx, stream, expected, evs...)
}
