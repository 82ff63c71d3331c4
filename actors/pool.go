package actors

import "time"

// Worker pools: load-aware dispatch of remote calls (docs/worker-protocol.md,
// "Worker pools"; the stream, subjects and consumer are package protocol's).
// A host publishes the calls of the tools a pool serves into the pool
// stream (protocol.WorkerQueueStream) with the reply subject in
// protocol.HeaderReply; the pool's workers pull them, one pull per free
// slot. These are the host's own settings for such calls.

// DefaultWorkerQueueWait is how long a host lets a remote call wait in a
// worker pool's queue before it takes it back and fails it
// (HostConfig.WorkerQueueWait).
const DefaultWorkerQueueWait = 10 * time.Minute

// queueCheckEvery is how often a host checks that a call waiting in a
// pool stream is still there: a call lost with the stream (a one-replica
// stream in memory whose server restarted) is sent again.
const queueCheckEvery = 5 * time.Second
