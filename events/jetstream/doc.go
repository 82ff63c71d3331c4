// Package jetstream is weft's default events.Store: the event log kept in
// one NATS JetStream stream, on the embedded nats-server (bus.StartServer)
// or on an external NATS cluster (bus.Connect). Nothing in it depends on
// which of the two it talks to.
//
// # Layout
//
// All events live in one JetStream stream (DefaultStreamName, configurable)
// bound to "<root>.log.>" with a subject transform onto "<root>.evt.>". The
// store publishes each event whole on its ingest subject (bus
// Subjects.LogIngest), weft.log.session.42.tool.returned, and the stream
// stores it as one message on the event subject of its weft stream and
// type:
//
//	weft.evt.session.42.tool.returned
//
// so that "weft.evt.session.*.tool.returned" or "weft.evt.session.42.>" are
// ordinary filters over the stored events (consumers, direct gets). A core
// NATS subscriber to the event subjects never receives a stored message:
// the runtime publishes the live copies there, their private surfaces
// redacted (events.Redact). New moves a stream bound to "<root>.evt.>" (the
// layout before) to this one; its messages keep their subjects. The
// body is the JSON envelope (id, stream, version, type, schema version,
// time, ids, data); the global Position of an event is its JetStream stream
// sequence, and its Version is carried in the body.
//
// Data longer than the inline limit (WithInlineBytes, default
// events.DefaultInlineBytes, at most the server's max payload less 8 KiB)
// is kept in a JetStream Object Store bucket beside the stream
// (BlobBucket, "WEFT_EVENTS_BLOBS" by default; the Blobs type), named by
// its SHA-256, and the event's message carries the reference (see "Large
// payloads" in the events package): the object store chunks it, so events
// up to WithMaxDataBytes (default events.DefaultMaxBlobDataBytes) fit
// whatever the server's max payload. Reads resolve the references and
// check each blob against its hash. A process whose credentials cannot
// create the bucket while it does not exist yet opens the store without
// it: appends of large data then fail with events.ErrPayloadTooLarge and
// reads of references with events.ErrUnresolvedBlob, each saying why.
//
// # Appends
//
// Every event is a message of its own, on its event subject (see Layout),
// with Nats-Msg-Id = event id, and every message is fenced: the server
// stores it only if the log is still as the store computed the event's
// version and hash link from.
//
// Append is conditional and all or nothing. Its first (or only) message
// carries Nats-Expected-Last-Subject-Sequence and
// Nats-Expected-Last-Subject-Sequence-Subject (the weft stream's wildcard
// subject), so the server refuses it if any event was appended to the
// weft stream since the version the append was computed from. The store
// caches the last (version, sequence, hash) of each stream it wrote; a
// stale cache only costs a refused publish and a re-read. A single event
// is one publish. A batch of several events is published as one
// nats-server atomic batch (stream option AllowAtomicPublish, nats-server
// 2.12 or later): all of it is stored, or none of it.
//
// AppendSteps (events.StepAppender) is for sequences of which every
// prefix is a state the caller carries on from, such as the steps of a
// run: it publishes the events back to back, without waiting in between,
// and then waits once for all their acknowledgements, so a step of n
// events costs one round trip instead of n. Its first message carries the
// fence of Append; each next message carries Nats-Expected-Last-Sequence
// (the log's last sequence: the one the message before it is expected at)
// and Nats-Expected-Last-Msg-Id (the id of the event before it). The
// server checks message ids for duplicates before the expectations, so
// both are needed: the sequence alone would let an event follow a
// message of someone else's at the expected sequence, the id alone would
// let it follow an earlier copy of the event before it that is the log's
// last message, while this step's copy was refused as a duplicate. With
// both, a stored event is always right after the one before it in the
// step, which was stored by this append: what is stored is a prefix of
// the step, at consecutive versions, and no other writer's event can be
// in between (two writers cannot fork a stream). The sequences are the
// store's guess (from the last acknowledgement it received); when another
// writer of the log made it stale, the first event is stored, the next one
// refused, and the store carries on with the rest from the stored prefix,
// fenced again. When an event is refused for any other reason (an id
// stored in another stream, a payload too large), AppendSteps returns the
// error with the stored prefix in its result.
//
// The server checks message ids before it checks expected sequences, so
// re-appending after a lost acknowledgement, within the duplicate window
// (WithDuplicateWindow, default DefaultDuplicateWindow), is recognised by
// the server; the store then reads the stream and returns the original
// versions and position with Duplicate set. A re-append with an exact
// expected version is recognised at any age (the version check fails and
// the store looks for the ids after the expected version). A re-append
// with events.Any after the duplicate window has passed is not recognised
// and stores the events again: retry with an exact version, or within the
// window.
//
// The runtime's session actor makes fewer, longer steps (actors/doc.go,
// "Fused appends"): an append that only records a state change the actor
// carries on from at once (run.started, a finished call's tool events) is
// not sent alone but with the next decision's events (the first or next
// model.request), so a one-call run costs four or five AppendSteps round
// trips instead of six. The trade-off is the actor's, not the store's:
// the events are applied to the session's state before their
// acknowledgement, so a failed append makes the actor read its stream
// again (a pipeline may have stored a prefix), and a command waits for
// the fused append before it is answered. The store's guarantees are
// the same: each event is fenced, idempotent by id and hash-chained, and
// what is stored is a prefix of what was sent.
//
// Why not one message per step, or nats-server's fast batches: a message
// carrying a step's several events would have one subject, so the
// per-type subjects ("weft.evt.session.*.tool.returned") would no longer
// select every event of a type, and one stream sequence, so events would
// no longer each have their Position. A fast batch (AllowBatchPublish,
// Nats-Batch-Id in the reply subject) is not atomic either, skips a
// duplicate and goes on with the next message, and its publisher waits for
// the first message's acknowledgement before it sends the rest: two round
// trips, and the same fences would still be needed.
//
// # Durability
//
// What an acknowledged append survives is decided by the server's fsync
// policy, which this package does not choose. On the embedded server it is
// bus.ServerConfig.Sync:
//
//   - bus.SyncAlways: the server writes and fsyncs every event before it
//     acknowledges the append (an atomic batch is fsynced once, at its
//     commit). An acknowledged append survives a crash of the process and
//     a power loss.
//   - bus.SyncPeriodic (the nats-server default): the server acknowledges
//     once the event is in its write buffer, writes the buffer to the
//     stream's block file within milliseconds, and fsyncs every sync
//     interval (2 minutes by default). An acknowledged append survives a
//     clean shutdown and, once written, a crash of the process; the last
//     sync interval can be lost on a power loss or kernel crash.
//
// On an external cluster the same choice is the server's jetstream
// sync_interval setting ("always" or a duration), and a stream with
// WithReplicas(3) acknowledges only once a majority of replicas hold the
// event.
//
// # Reads
//
// ReadStream uses batched direct gets filtered on the stream's subjects
// (stream option AllowDirect): no consumer is created on the server, which
// suits the short reads of one session. ReadAll and Subscribe use an
// ordered consumer: the faster path for long reads (about twice the
// throughput of direct gets, whose responses carry per-message headers),
// and one that recovers from gaps by itself, so Subscribe's catch-up and
// live phases are one sequence with no gap and no duplicate.
//
// A message on an event subject that is not a weft event envelope is
// poison (*events.PoisonError, naming the stream its subject names):
// ReadAll and Subscribe yield it and go on, ReadStream of that stream fails
// with it.
//
// The event stream denies deletes and purges and holds only event
// subjects, so its sequences are dense from 1 and each stream's versions
// run 1, 2, 3, …. A damaged file store breaks that: the server skips a
// message of a corrupted block (direct gets and consumers alike) yet still
// counts it, so an ordered consumer's pending count never reaches zero and
// a read waiting for it would hang. Reads check the sequence instead: a
// skipped sequence or version, a message that does not arrive within 2 s
// while the stream's state says it is stored (asked of the stream's leader),
// and a stream whose last message cannot be read (which would look new to
// Append, and fork) fail with an *events.DamagedStoreError naming the
// stream and version, or the position.
//
// # Throughput
//
// On the embedded server, an atomic batch costs milliseconds whatever the
// fsync policy: nats-server stages every atomic batch of an R1 file stream
// in a file store of its own, created, fsynced and deleted per batch. A
// pipelined AppendSteps does not pay this. BenchmarkStore measures the
// three (go test -run '^$' -bench Store -benchmem ./events/jetstream/; a
// 2-core machine shared with other builds, so the figures are rough):
//
//	                      single event   batch4 (atomic)   steps4 (AppendSteps)
//	default sync (2 min)  ~100-150 µs    ~4-8 ms           ~350 µs (~90 µs/event)
//	bus.SyncAlways        ~0.5-0.6 ms    ~5-7 ms           ~1.75 ms (~440 µs/event)
//
// steps4 is four events in one round trip: under the default sync less
// than two thirds of the cost of four single appends, and a tenth to a
// twentieth of an atomic batch. Under SyncAlways the server fsyncs every
// message, so the fsyncs bound it more than the round trips: it saves
// about a quarter there.
//
// The weft runtime needs all or nothing only for the rare steps listed in
// "Appends" in the actors package doc; the others, every prefix of which
// it carries on from, it appends with AppendSteps: one round trip per step
// instead of one per event.
package jetstream
