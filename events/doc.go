// Package events is weft's event log: the envelope every state change is
// recorded in, the closed catalogue of event types, and the Store port that
// the backends implement.
//
// The log is the source of truth. A session's state is a fold of the events
// in its stream; projections are disposable views rebuilt from the global
// order. Backends live in subpackages (memstore, jetstream, esdb) and every
// one of them passes the exported conformance suite in storetest.
//
// # Versions and positions
//
// Every event has two coordinates:
//
//   - Version: its place in its own stream, starting at 1. A stream that
//     holds n events is "at version n"; a stream that does not exist is at
//     version 0.
//   - Position: its place in the global order across all streams. Positions
//     are strictly increasing in append order but need not be dense (the
//     EventStoreDB backend uses commit positions). A consumer checkpoints the
//     Position of the last event it processed and resumes "after" it; 0 means
//     "from the beginning".
//
// # Appends
//
// Append is conditional on an ExpectedVersion (Any, NoStream, or Exact(n)),
// all-or-nothing for a batch, and idempotent by event ID: re-appending a
// batch whose IDs are already stored, in the same order, at the end of the
// stream or anywhere in it, returns the original result and writes nothing.
//
// # Hash chain
//
// Every event carries in PrevHash the Hash of the event before it in its
// stream ("" for version 1). The store assigns it at append (Chain), under
// the same condition as the expected version, so every writer's events are
// chained and a stream cannot fork. VerifyChain, Verifier and VerifyStreams
// recompute the chain and report the first altered, missing, inserted or
// reordered event as a *ChainError. Altering the last event of a stream is
// not detectable from the plain chain alone (nothing links to it yet), and
// anyone can recompute a plain chain.
//
// # Keyed chain and checkpoints
//
// A store given chain keys (memstore.WithChainKeys and the like) also sets
// KeyID and MAC on every event: an HMAC-SHA256 of its Hash under the
// current ChainKey, which only the nodes hold, so an event forged with the
// right PrevHash fails Verifier.Keys. A Checkpoint, signed with the key's
// Ed25519 half and kept outside the log, records every stream's head;
// VerifyOptions.Checkpoint then reports a stream that was truncated,
// deleted or replaced, or whose checkpointed event changed, and needs only
// the PublicKeyring. See ChainKey for why the MAC is per event and the
// signature per checkpoint, and the README for what is and is not detected.
//
// # Poison
//
// A store never takes in an event its readers could not decode:
// PrepareAppend, which every backend calls first in Append, refuses a type
// or schema version outside the catalogue and data that Decode refuses.
// Poison can still reach a log another way (a message published by hand on
// an event subject, an event written by another version or another
// client). Readers quarantine it as a *PoisonError instead of stopping at
// it: ReadAll and Subscribe yield it as a non-final element and go on;
// ReadStream of its stream fails with it (a session whose stream holds it
// is damaged); consumers that decode (the projections) turn a Decode
// failure into one with Poison, and CheckStored does so for others.
//
// A damaged store is another matter: a read that finds the backend unable
// to give back what it acknowledged (a gap in a stream's versions, a
// message its files lost) ends at once with a *DamagedStoreError naming
// the stream and version or the position, instead of waiting for it.
package events
