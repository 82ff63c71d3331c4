// Package protocol is the wire of weft: the messages, headers and subjects
// with which a node sends tool calls to remote tool workers and hears back,
// and the session commands clients and nodes send (a node's own calls and
// commands use the same values in process, off NATS). docs/worker-protocol.md is its specification, written for worker
// authors in any language; this package is its Go form, imported by both
// sides: the runtime (package actors) and the Go worker (package worker),
// which therefore never imports the runtime.
//
// It holds, one idea per file:
//
//   - messages.go: the bodies, ToolRequest (a call), ToolReport (heartbeat,
//     started, retried, progress, then exactly one returned report) and
//     WorkerDescription (a worker's answer to describe);
//   - delivery.go: the headers of a call (HeaderCallID, HeaderDelivery,
//     HeaderHeartbeat, HeaderReply), the queue group WorkerQueueGroup, and
//     the heartbeat and re-delivery budget (WorkerHeartbeat,
//     MissedHeartbeats, MaxDeliveries);
//   - subjects.go: the worker subjects (WorkerCallSubject,
//     WorkerCancelSubject and its inverse, WorkerCancelFilter,
//     WorkerDescribeSubject) under the root of a bus.Subjects;
//   - pool.go: worker pools, load-aware dispatch through a JetStream work
//     queue (ValidatePool, WorkerQueueStream, WorkerQueueSubject, the
//     stream's and the pool consumer's configurations);
//   - payload.go: payloads too large for a NATS message, sent by reference
//     to the blob store or replaced by an execution error (PayloadLimits,
//     EncodeRequest / ResolveRequest, EncodeReport / ResolveReport);
//   - execute.go: how a call is executed and reported, the same for a
//     node's local calls and a worker's (ExecuteCall, ObservedTool).
//
// All bodies are JSON; unknown fields are ignored by both sides. The
// package depends only on downward packages (bus, events, toolsets) and the
// NATS client, never on the actor runtime.
//
// It also holds the session commands, which clients and nodes speak (not
// workers): command.go (the verbs, StartCommand, ResumeCommand with its
// Decisions, CancelCommand, CommandReply, InboxPrefix) and
// command_error.go (CommandError and the sentinels of its codes). Package
// actors keeps their names as aliases.
package protocol
