package protocol

import "time"

// How a call is delivered to remote workers, and delivered again when its
// worker goes silent (docs/worker-protocol.md, "A call" and "Heartbeats,
// re-delivery and the at-least-once rule").
const (
	// WorkerQueueGroup is the queue group workers serve calls in.
	WorkerQueueGroup = "weft-workers"
	// HeaderCallID carries the call id of a request (unique within its
	// run: the idempotency key is the session, run and call ids).
	HeaderCallID = "Weft-Call-Id"
	// HeaderDelivery is the delivery number of a request: 1, then 2, 3, …
	// when the node sends the call again after a worker went silent.
	HeaderDelivery = "Weft-Delivery"
	// HeaderHeartbeat is the heartbeat interval the node expects, in
	// milliseconds.
	HeaderHeartbeat = "Weft-Heartbeat-Ms"
	// HeaderReply carries the reply subject of a call sent to a worker
	// pool: a message a worker pulls from JetStream has its
	// acknowledgement subject as reply subject, not the node's.
	HeaderReply = "Weft-Reply"
	// WorkerHeartbeat is the interval at which a worker reports a running
	// call with a heartbeat report.
	WorkerHeartbeat = 250 * time.Millisecond
	// MissedHeartbeats is how many heartbeat intervals may pass without
	// any report of a call before the node sends it again.
	MissedHeartbeats = 4
	// HeartbeatDeadline is how long a call may go without any report
	// before the node sends it again (MissedHeartbeats heartbeat
	// intervals), and the pool consumer's acknowledgement wait.
	HeartbeatDeadline = MissedHeartbeats * WorkerHeartbeat
	// MaxDeliveries is how many times a node sends a call to workers
	// before it gives up with an execution error. A worker cut off from
	// the network without its connection closing (stopped, partitioned)
	// keeps its queue subscription until the server notices, and each
	// delivery may land on it again: the budget is generous.
	MaxDeliveries = 10
)
