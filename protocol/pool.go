package protocol

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
)

// Worker pools: load-aware dispatch of remote calls (docs/worker-protocol.md,
// "Worker pools"). A worker that joins pool P takes calls from a JetStream
// work queue instead of the core queue group: a node publishes the calls of
// the tools P serves into the stream WorkerQueueStream(root), on
// <root>.worker.queue.<pool>.<tool>, with the reply subject in HeaderReply,
// and the workers of P pull them through one shared durable consumer
// (WorkerPoolConsumerConfig), one pull per free slot. A call therefore
// waits in the stream until a worker has room for it, instead of being
// handed at random to a worker that may be busy.

// DefaultPoolConcurrency is how many calls a pooled worker runs at once
// when it sets no limit: a pull consumer needs one outstanding pull per
// call a worker can take.
const DefaultPoolConcurrency = 16

// queueMaxAge is how long the pool stream keeps a call nobody took:
// longer than a node lets a call wait (its queue wait, 10 minutes by
// default), so that only calls of nodes that died are dropped by age.
const queueMaxAge = time.Hour

// ErrBadPool is matched by the errors of invalid pool names and pool
// configurations.
var ErrBadPool = errors.New("protocol: bad worker pool")

// ValidatePool checks a pool name: 1 to 64 letters, digits, '_' or '-'
// (it is a subject token and part of a consumer name). The error matches
// ErrBadPool.
func ValidatePool(pool string) error {
	if pool == "" || len(pool) > 64 {
		return fmt.Errorf("%w: pool name %q: want 1 to 64 characters", ErrBadPool, pool)
	}
	for _, c := range pool {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: pool name %q: only letters, digits, '_' and '-'", ErrBadPool, pool)
		}
	}
	return nil
}

// WorkerQueueStream returns the name of the JetStream stream that holds
// the calls sent to worker pools under subject root s: "WEFT_WORKER_QUEUE"
// for the default root (the root upper-cased, '.' and '-' as '_').
func WorkerQueueStream(s bus.Subjects) string {
	root := strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(s.Root()))
	return root + "_WORKER_QUEUE"
}

// WorkerQueueSubject returns the subject a node publishes the calls of tool
// name to pool on: "<root>.worker.queue.<pool>.<name>".
func WorkerQueueSubject(s bus.Subjects, pool, name string) (string, error) {
	if err := ValidatePool(pool); err != nil {
		return "", err
	}
	tok, err := bus.EscapeToken(name)
	if err != nil {
		return "", err
	}
	return s.Root() + ".worker.queue." + pool + "." + tok, nil
}

// WorkerQueueStreamConfig is the configuration of the pool stream: a work
// queue (a call is removed once a worker acknowledges it) of every
// <root>.worker.queue.> subject, in memory with the given replicas (at
// least 1). Calls are transient (the event log records them): memory
// halves the round trip against file storage, and a call lost with a
// restarted server is sent again by its node, which checks that the calls
// it queued are still there.
func WorkerQueueStreamConfig(s bus.Subjects, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        WorkerQueueStream(s),
		Description: "weft: remote tool calls waiting for a worker of their pool",
		Subjects:    []string{s.Root() + ".worker.queue.>"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.MemoryStorage,
		Replicas:    max(replicas, 1),
		MaxAge:      queueMaxAge,
		Discard:     jetstream.DiscardOld,
	}
}

// WorkerPoolConsumerConfig is the configuration of the durable consumer
// the workers of pool share: every call of the pool, acknowledged
// explicitly by the worker that takes it (after its first heartbeat) and
// given to another worker if no acknowledgement came within the heartbeat
// deadline (HeartbeatDeadline).
func WorkerPoolConsumerConfig(s bus.Subjects, pool string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       "pool_" + pool,
		Description:   "weft: the workers of pool " + pool,
		FilterSubject: s.Root() + ".worker.queue." + pool + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       HeartbeatDeadline,
		MaxDeliver:    -1,
		MaxAckPending: -1,
		MaxWaiting:    4096,
	}
}
