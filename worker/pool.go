package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/protocol"
)

// WithPool makes the worker take its calls from worker pool name instead
// of the core queue group: nodes publish the calls of the pool's tools
// into a JetStream work queue (protocol.WorkerQueueStream) and the pool's
// workers pull them through one shared consumer, one pull per free slot,
// so a call goes to a worker with room for it and waits in the stream
// while every worker is busy (load-aware dispatch; see "Worker pools" in
// docs/worker-protocol.md). The workers of a pool should serve the same
// tools: a worker hands a call of a tool it does not serve back to the
// pool. A pooled worker needs JetStream; its concurrency is
// protocol.DefaultPoolConcurrency unless WithConcurrency sets it.
func WithPool(name string) Option { return func(w *Worker) { w.pool = name } }

// WithQueueReplicas sets the replicas of the pool stream when this worker
// creates it (default 1; 3 on a fault-tolerant cluster). A stream that
// exists keeps its configuration.
func WithQueueReplicas(n int) Option { return func(w *Worker) { w.queueReplicas = n } }

// servePool creates the pool stream (if absent) and the pool's consumer,
// and starts one puller per slot. The pullers stop when ctx ends; the
// calls they took run on under callCtx.
func (w *Worker) servePool(ctx, callCtx context.Context) (stopped <-chan struct{}, err error) {
	js, err := jetstream.New(w.nc)
	if err != nil {
		return nil, fmt.Errorf("worker: pool %s: %w", w.pool, err)
	}
	scfg := protocol.WorkerQueueStreamConfig(w.subj, w.queueReplicas)
	if _, err := js.CreateStream(ctx, scfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return nil, fmt.Errorf("worker: pool %s: stream %s: %w", w.pool, scfg.Name, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, scfg.Name, protocol.WorkerPoolConsumerConfig(w.subj, w.pool))
	if err != nil {
		return nil, fmt.Errorf("worker: pool %s: consumer: %w", w.pool, err)
	}
	slots := cap(w.slots) // the WithConcurrency limit
	if slots == 0 {
		slots = protocol.DefaultPoolConcurrency
	}
	done := make(chan struct{})
	left := make(chan struct{}, slots)
	for range slots {
		go func() {
			defer func() { left <- struct{}{} }()
			w.pull(ctx, callCtx, cons)
		}()
	}
	go func() {
		for range slots {
			<-left
		}
		close(done)
	}()
	return done, nil
}

// pullWait is how long one pull request waits at the server for a call,
// and pullHeartbeat the interval of the server's heartbeats on it: a pull
// lost with its server (the consumer's leader died) is noticed after two
// missed heartbeats, and pulled again.
const (
	pullWait      = 5 * time.Second
	pullHeartbeat = time.Second
)

// pull is one slot of a pooled worker: it pulls a call, runs it, and
// pulls the next, until ctx ends.
func (w *Worker) pull(ctx, callCtx context.Context, cons jetstream.Consumer) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, pullWait)
		msg, err := cons.Next(jetstream.FetchContext(fctx), jetstream.FetchHeartbeat(pullHeartbeat))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			// JetStream unavailable (a server restarting): try again soon.
			w.log.Warn("pull a call", "pool", w.pool, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(WorkerPullRetry):
			}
			continue
		}
		w.takePooled(callCtx, msg)
	}
}

// WorkerPullRetry is how long a pooled worker's slot waits before it pulls
// again after a failed pull.
const WorkerPullRetry = time.Second

// poolAckWait bounds the wait for the server's confirmation of a pooled
// call's acknowledgement: half the node's heartbeat deadline, so that the
// call's next heartbeat, sent when it is served, still comes in time.
const poolAckWait = protocol.HeartbeatDeadline / 2

// takePooled runs a call pulled from the pool: it reports a first
// heartbeat, then acknowledges the message (so that a worker that dies in
// between leaves it to be given to another one) and waits for the server
// to confirm the acknowledgement, then serves it as a call from the queue
// group.
//
// A call whose acknowledgement is not confirmed within poolAckWait (the
// server died, the connection dropped) is not served: at most one run per
// confirmed acknowledgement. Either the acknowledgement did not land, and
// JetStream gives the message to a worker again after its ack wait; or it
// landed and only the confirmation was lost, and the call's reports stop
// after the first heartbeat, so the node sends it again once its heartbeat
// deadline passes (a new delivery into the pool's stream), and fails it
// after MaxDeliveries. Serving regardless would run the call twice
// whenever the acknowledgement was lost.
func (w *Worker) takePooled(callCtx context.Context, msg jetstream.Msg) {
	h := msg.Headers()
	reply := h.Get(protocol.HeaderReply)
	if reply == "" {
		w.log.Warn("pooled call without a reply subject", "subject", msg.Subject())
		_ = msg.Term()
		return
	}
	name, err := bus.UnescapeToken(msg.Subject()[strings.LastIndexByte(msg.Subject(), '.')+1:])
	if _, served := w.reg.Lookup(name); err != nil || !served {
		// Another worker of the pool serves it.
		_ = msg.NakWithDelay(protocol.WorkerHeartbeat)
		return
	}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		_ = msg.Nak()
		return
	}
	w.calls.Add(1)
	w.mu.Unlock()
	defer w.calls.Done()
	w.publishReport(reply, protocol.ToolReport{Type: protocol.ReportHeartbeat, CallID: h.Get(protocol.HeaderCallID), Tool: name})
	actx, cancel := context.WithTimeout(callCtx, poolAckWait)
	err = msg.DoubleAck(actx)
	cancel()
	if err != nil {
		w.log.Warn("pooled call not served: its acknowledgement was not confirmed", "subject", msg.Subject(), "err", err)
		return
	}
	w.serve(callCtx, &nats.Msg{Subject: msg.Subject(), Reply: reply, Data: msg.Data(), Header: nats.Header(h)})
}
