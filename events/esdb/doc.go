// Package esdb is the EventStoreDB (KurrentDB) backend of the event log: an
// events.Store over the official Go client,
// github.com/EventStore/EventStore-Client-Go/v4/esdb.
//
// # Mapping
//
//   - Streams are EventStoreDB streams of the same name (after
//     events.ValidateStream), optionally behind a prefix (WithStreamPrefix)
//     that scopes a Store to its own part of a shared database.
//   - Version is the EventStoreDB revision plus one: revisions count from 0,
//     versions from 1. Exact(n) is sent as revision n-1, NoStream and Any as
//     themselves.
//   - Position is the commit position of the event in $all plus one, so
//     that no event has position 0 (which the port reserves for "from the
//     beginning"). Positions are strictly increasing but not dense: they
//     are byte offsets in the server's transaction log. A checkpointed
//     Position p is resumed from the $all position (p-1, p-1); only 0 and
//     positions this backend returned are valid, anything else is refused
//     by the server as an invalid position.
//   - The event ID is the EventStoreDB event id, Type the event type, and
//     Data the event data with content type application/json. The rest of
//     the envelope (schema version, time, session, run, tool-call,
//     correlation and causation ids, prev hash) is the event's JSON
//     metadata (see Metadata), together with the id of the append that
//     wrote it.
//
// # Appends and idempotency
//
// A batch is one EventStoreDB append, which is atomic. Append first reads
// the stream's last event and chains the batch to it (events.Chain), then
// sends the batch under that event's exact revision, whatever the caller's
// expectation, so the chain cannot fork: a writer that got in between makes
// the server refuse the batch, which is chained again on the new last
// event under events.Any and resolved as below otherwise. Because the
// server never sees Any, an append under Any reads the whole stream first
// to recognise a retry of a stored batch. EventStoreDB
// deduplicates a re-append of the same event ids made with the same
// expected revision as the original (and, best effort, under Any). Append
// tells a duplicate from a fresh write by reading back the last event of
// the batch and comparing the append id in its metadata, so Duplicate and
// the original versions and position are reported exactly. When the server
// answers "wrong expected version", Append reads the stream: if the batch's
// ids are already stored in order anywhere in it, the append is a
// duplicate; otherwise the error is a *events.WrongVersionError whose
// Actual is the stream's version at that read.
//
// Limits: Data larger than the configured maximum (default
// events.DefaultMaxDataBytes) is refused before sending; the server's own
// maximum append size (1 MiB by default, for the whole batch with its
// metadata) is also reported as events.ErrPayloadTooLarge. A re-append
// under an expected version that matches the stream's current version
// (for example Exact(current) after the original batch was stored with
// another expectation) is written again by EventStoreDB and cannot be
// caught here; retries must reuse the original expectation.
//
// Large payloads: this backend has no blob store (it does not implement
// events.BlobStore), so it keeps every event's Data inline and an event
// over the limit above is refused with events.ErrPayloadTooLarge rather
// than stored by reference (see "Large payloads" in the events package).
// A runtime on it keeps tool results and model responses under the limit
// (Store.MaxDataBytes lowers its payload cap: a larger result is a tool
// error) and fails a run whose other events are refused (kind
// payload_too_large) instead of leaving it running; raise the limit with
// WithMaxDataBytes together with the server's EVENTSTORE_MAX_APPEND_SIZE
// for larger payloads. Data that is a blob
// reference is refused at append, as by every backend.
//
// # Reading
//
// ReadAll and Subscribe read $all and skip system events (streams or event
// types starting with "$") and, with a prefix, every stream outside it.
// Subscribe is an EventStoreDB catch-up subscription to $all (a
// server-side stream-prefix filter when a prefix is set). Older servers
// that do not report positions on stream reads make ReadStream leave
// Position 0, and may make Append report LastPosition 0 for a duplicate.
package esdb
