package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
)

// AddRemoteTools tells the host that the tools named are served by remote
// tool workers (docs/worker-protocol.md): their calls go to
// <root>.worker.call.<name> instead of to a tool actor, for every agent of
// the host (a local tool of the same name is shadowed). Other tools stay
// local.
func (h *Host) AddRemoteTools(names ...string) {
	for _, n := range names {
		h.remote.Store(n, "")
	}
}

// AddPooledTools tells the host that the tools named are served by the
// remote workers of pool: their calls are published into the pool's
// JetStream work queue, <root>.worker.queue.<pool>.<name> (see
// WorkerQueueSubject), for the pool's workers to pull.
func (h *Host) AddPooledTools(pool string, names ...string) error {
	if err := ValidatePool(pool); err != nil {
		return err
	}
	for _, n := range names {
		h.remote.Store(n, pool)
	}
	return nil
}

// IsRemoteTool reports whether calls of tool name go to remote workers.
func (h *Host) IsRemoteTool(name string) bool {
	_, ok := h.remote.Load(name)
	return ok
}

// remotePool returns the worker pool of remote tool name, "" for the core
// queue group.
func (h *Host) remotePool(name string) string {
	v, _ := h.remote.Load(name)
	p, _ := v.(string)
	return p
}

// scheduleBatch starts a scheduler on the calls of a batch.
type scheduleBatch struct {
	runID string
	calls []ToolRequest
	// sequential runs the calls one at a time in model order.
	sequential bool
	// handOver is set by the session actor before it stops the scheduler
	// because it stops driving the session (its node closes, or another
	// node took the session over) while the run goes on: the node that
	// carries the run on delivers the open remote calls again under the
	// same ids, so they are not cancelled (a worker remembers a cancel
	// that precedes a call, and would answer that delivery "cancelled").
	handOver atomic.Bool
}

// toolMsg carries a call's report to the session.
type toolMsg struct {
	carriedFlag
	runID  string
	report ToolReport
}

// batchFinished tells the session that every call of the batch returned.
type batchFinished struct {
	carriedFlag
	runID string
}

// remoteCall is a call sent to remote workers that has not returned.
type remoteCall struct {
	req      ToolRequest
	subject  string
	data     []byte
	lastSeen time.Time // when it was last sent or reported on
	sent     int       // deliveries so far
	// A call to a worker pool (pool != "") waits in the pool's stream
	// until a worker takes it: heard is whether a worker reported on the
	// current delivery; until then, queued says the stream stored it (at
	// seq, at queuedAt) and the heartbeat deadline does not apply.
	pool      string
	heard     bool
	queued    bool
	seq       uint64
	queuedAt  time.Time
	checkedAt time.Time // when the queued message was last looked for
	takingOut bool      // a delete (or a look) of the queued message is under way
	pooledMsg *nats.Msg // the current delivery's message, published again after a failure
	// publishing is set while a delivery's publish into the pool stream is
	// under way or waits to be tried again (the stream was unavailable,
	// e.g. during a leader election): since publishingAt, with the
	// heartbeat deadline suspended, and not counted as another delivery.
	publishing   bool
	publishingAt time.Time
	pubFails     int
	// inFlight is the publish under way, nil when none is.
	inFlight *poolPublish
	// resolving is set once a return by reference arrived and is being
	// read from the blob store: the call has returned, and is not sent
	// again however long the read takes.
	resolving bool
}

// resolvedReport is a returned report whose return was read from the blob
// store (see resolveReturn).
type resolvedReport struct{ report ToolReport }

// poolPublish is one publish of a pooled call into the pool stream. Its
// state settles the race between the stream's acknowledgement (handled
// by the publishing goroutine) and the run's cancellation (handled by the
// scheduler, which stops at once): whichever comes second deletes the
// stored message, so a cancelled call does not stay queued for a worker.
type poolPublish struct {
	state atomic.Int32 // publishPending, publishStored or publishWithdrawn
	seq   atomic.Uint64
}

const (
	publishPending int32 = iota
	publishStored
	publishWithdrawn
)

// checkRemote makes the scheduler look for silent remote calls.
type checkRemote struct{}

// queuedCall tells the scheduler the outcome of publishing delivery of a
// pooled call into the pool stream.
type queuedCall struct {
	callID   string
	delivery int
	seq      uint64
	err      error
}

// republishCall makes the scheduler try a pooled call's delivery again
// after its publish failed.
type republishCall struct {
	callID   string
	delivery int
}

// dequeuedCall tells the scheduler the outcome of deleting (or, with
// look, looking for) a pooled call's queued message: err nil means no
// worker had taken it.
type dequeuedCall struct {
	callID   string
	delivery int
	look     bool
	err      error
}

// schedulerActor runs one tool batch that has calls of remote tools (a
// batch of local calls only runs without it, see localBatch): it sends
// each call (all at once, or one after another when the batch is
// sequential) and tells the session that the call's first attempt
// started, forwards the calls' reports to the session in the order they
// arrive, and stops when every call has returned. A local call runs in a
// goroutine of this process that reports to the scheduler as Go values. The session
// hands the returns to the model in model order.
//
// Calls of remote tools (Host.AddRemoteTools) go to
// <root>.worker.call.<name>: the scheduler sends a call again (same call
// id) when no report of it arrived for MissedHeartbeats heartbeat
// intervals, up to MaxDeliveries times, and publishes a cancel for each
// remote call still open when it stops (the run ended or was cancelled).
// Reports of a call that already returned are dropped.
type schedulerActor struct {
	h        *Host
	batch    *scheduleBatch
	parent   *actor.PID
	inbox    string // the reply subject of the batch's calls
	next     int
	open     int
	done     bool
	returned map[string]bool        // call id → its return was forwarded
	remote   map[string]*remoteCall // open remote calls by call id
	stop     chan struct{}          // stops the remote-call ticker
	// hooked, beforeRecs and afterDone follow the agent's hooks around
	// remote calls (scheduler_hooks.go).
	hooked     map[string]bool
	beforeRecs map[string][]toolsets.HookRecord
	afterDone  map[string]bool
}

// Receive implements actor.Actor.
func (a *schedulerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.parent = c.Parent()
		a.inbox = a.h.newReplySubject(c.Self())
		a.returned = map[string]bool{}
		if a.batch.sequential {
			a.send(c)
		} else {
			for range a.batch.calls {
				a.send(c)
			}
		}
	case *resolvedReport:
		if rc := a.remote[m.report.CallID]; rc != nil {
			rc.resolving = false
		}
		a.onReport(c, &m.report)
	case *ToolReport:
		a.onReport(c, m)
	case *checkRemote:

		a.checkRemote(c)
	case *queuedCall:
		a.onQueued(c, m)
	case *republishCall:
		if rc := a.remote[m.callID]; rc != nil && rc.sent == m.delivery && rc.publishing {
			a.publishPooled(c, rc)
		}
	case *dequeuedCall:
		a.onDequeued(c, m)
	case *remoteBefore:
		a.onRemoteBefore(c, m)
	case *remoteAfter:
		a.onRemoteAfter(c, m)
	case *actor.Stopping:
		a.h.replies.Delete(a.inbox)
		if a.stop != nil {
			close(a.stop)
		}
		a.cancelRemote(!a.batch.handOver.Load())
	}
}

// onReport handles a report of one of the batch's calls.
func (a *schedulerActor) onReport(c actor.Context, m *ToolReport) {
	if a.returned[m.CallID] {
		return // a late or duplicated report of a returned call
	}
	rc := a.remote[m.CallID]
	if rc != nil {
		rc.lastSeen = time.Now()
		rc.heard = true
	}
	if m.Type == ReportHeartbeat {
		return
	}
	if m.Type == ReportReturned && m.ReturnBlob != nil {
		a.resolveReturn(c, rc, *m)
		return
	}
	if m.Type == ReportReturned && a.afterRemote(c, rc, m) {
		return
	}
	c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: *m})
	if m.Type != ReportReturned {
		return
	}
	a.returned[m.CallID] = true
	if rc != nil && rc.queued && rc.sent > 1 {
		// The return may come from an earlier delivery: the current
		// one, if still in the pool stream, must not run. (With one
		// delivery, the worker that returned took it.)
		a.takeOut(nil, rc, false)
	}
	delete(a.remote, m.CallID)
	a.open--
	if a.batch.sequential && a.next < len(a.batch.calls) {
		a.send(c)
	}
	a.maybeDone(c)
}

// resolveReturn reads the return of report r, which carries it by
// reference, from the blob store in a goroutine (the actor does not block
// on it), and handles the report once it has it (resolvedReport). Until
// then the call counts as returned for re-delivery: it is not sent again.
func (a *schedulerActor) resolveReturn(c actor.Context, rc *remoteCall, r ToolReport) {
	if rc != nil {
		if rc.resolving {
			return // a duplicate of the return under way
		}
		rc.resolving = true
	}
	self, h := c.Self(), a.h
	go func() {
		ctx, cancel := context.WithTimeout(h.life, storeTimeout)
		defer cancel()
		ResolveReport(ctx, h.payload.Blobs, &r)
		h.system.Root.Send(self, &resolvedReport{report: r})
	}()
}

func (a *schedulerActor) send(c actor.Context) {
	call := a.batch.calls[a.next]
	a.next++
	a.open++
	var err error
	if a.h.IsRemoteTool(call.Name) {
		if a.beforeRemote(c, call) {
			return // sent once the agent's hooks ran (onRemoteBefore)
		}
		err = a.sendRemote(c, call)
	} else {
		// A local tool runs in this process, which prepared the run; its
		// reports come back to this actor as Go values.
		self := c.Self()
		go a.h.executeLocal(call, func(r ToolReport) { a.h.system.Root.Send(self, &r) })
	}
	if err == nil {
		// The first attempt starts when the call is sent; the call
		// reports the attempts of its retries itself.
		c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: ToolReport{Type: ReportStarted, CallID: call.CallID, Tool: call.Name, Attempt: 1}})
	}
	if err != nil {
		a.open--
		a.fail(c, call, "send tool call: "+err.Error())
		if a.batch.sequential && a.next < len(a.batch.calls) {
			a.send(c)
		}
	}
}

// sendRemote sends call to the workers of its tool and starts watching it.
func (a *schedulerActor) sendRemote(c actor.Context, call ToolRequest) error {
	pool := a.h.remotePool(call.Name)
	var subject string
	var err error
	if pool != "" {
		subject, err = WorkerQueueSubject(a.h.subj, pool, call.Name)
	} else {
		subject, err = WorkerCallSubject(a.h.subj, call.Name)
	}
	if err != nil {
		return err
	}
	if e, ok := a.h.runEntry(call.SessionID, call.RunID); ok {
		e.mu.RLock()
		call.Metadata = e.meta
		e.mu.RUnlock()
	}
	data, err := a.encodeCall(call)
	if err != nil {
		return err
	}
	rc := &remoteCall{req: call, subject: subject, data: data, pool: pool}
	if err := a.deliver(c, rc); err != nil {
		return err
	}
	if a.remote == nil {
		a.remote = map[string]*remoteCall{}
		a.startTicker(c)
	}
	a.remote[call.CallID] = rc
	return nil
}

// encodeCall returns the message body of call, its arguments by reference
// to the blob store when they make it too large for a message.
func (a *schedulerActor) encodeCall(call ToolRequest) ([]byte, error) {
	return EncodeRequest(a.h.life, call, a.h.payload)
}

// deliver publishes rc's request once more: on its tool's call subject
// with the batch's inbox as reply subject, or, for a pooled tool, into the
// pool stream with the inbox in the Weft-Reply header (the stream's
// acknowledgement arrives as a queuedCall).
func (a *schedulerActor) deliver(c actor.Context, rc *remoteCall) error {
	rc.sent++
	rc.lastSeen = time.Now()
	if rc.queued {
		// A delivery still in the stream is superseded.
		a.takeOut(nil, rc, false)
	}
	rc.heard, rc.queued, rc.takingOut = false, false, false
	rc.publishing, rc.publishingAt, rc.pubFails = false, time.Time{}, 0
	msg := &nats.Msg{Subject: rc.subject, Data: rc.data, Header: nats.Header{}}
	msg.Header.Set(HeaderCallID, rc.req.CallID)
	msg.Header.Set(HeaderDelivery, strconv.Itoa(rc.sent))
	msg.Header.Set(HeaderHeartbeat, strconv.FormatInt(WorkerHeartbeat.Milliseconds(), 10))
	if o := a.h.cfg.Observer; o != nil {
		o.Delivering(rc.req, rc.sent, msg.Header)
	}
	if rc.pool == "" {
		msg.Reply = a.inbox
		return a.h.cfg.Conn.PublishMsg(msg)
	}
	msg.Header.Set(HeaderReply, a.inbox)
	// An id of this delivery's own: a publish of it tried again (its
	// acknowledgement timed out, yet the stream may have stored it) is
	// stored once, and no other delivery (a later one, or another node's
	// after a takeover) is taken for it.
	msg.Header.Set(jetstream.MsgIDHeader, uuid.NewString())
	rc.pooledMsg = msg
	a.publishPooled(c, rc)
	return nil
}

// publishPooled publishes rc's current delivery into the pool stream; the
// stream's acknowledgement comes back as a queuedCall. It is called again
// only once that came back, so the message is not in use by then.
func (a *schedulerActor) publishPooled(c actor.Context, rc *remoteCall) {
	if !rc.publishing {
		rc.publishing, rc.publishingAt = true, time.Now()
	}
	msg := rc.pooledMsg
	p := &poolPublish{}
	rc.inFlight = p
	h, self, root, id, delivery := a.h, c.Self(), a.h.system.Root, rc.req.CallID, rc.sent
	h.background(func() {
		ctx, cancel := context.WithTimeout(context.Background(), protocol.HeartbeatDeadline)
		defer cancel()
		ack, err := h.js.PublishMsg(ctx, msg)
		q := &queuedCall{callID: id, delivery: delivery, err: err}
		if err == nil {
			q.seq = ack.Sequence
			if h.poolStored != nil {
				h.poolStored(false)
			}
			p.seq.Store(ack.Sequence)
			if !p.state.CompareAndSwap(publishPending, publishStored) {
				// The run was cancelled (or its node stopped driving
				// it) while the publish was under way.
				dctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
				defer cancel()
				_ = h.dequeue(dctx, ack.Sequence, false)
				return
			}
			if h.poolStored != nil {
				h.poolStored(true)
			}
		}
		root.Send(self, q)
	})
}

// onQueued records that the pool stream stored a delivery of a pooled
// call: until a worker reports on it, it waits there. A publish the stream
// refused is tried again (the same delivery) at a growing interval, for up
// to the queue wait.
func (a *schedulerActor) onQueued(c actor.Context, m *queuedCall) {
	rc := a.remote[m.callID]
	if rc == nil || rc.sent != m.delivery || !rc.publishing {
		return
	}
	if m.err != nil {
		rc.inFlight = nil
		// The stream is unavailable (a leader election, a server
		// restarting): try the same delivery again, at a growing
		// interval, up to the queue wait.
		a.h.log.Warn("queue remote tool call", "tool", rc.req.Name, "pool", rc.pool, "call_id", m.callID, "err", m.err)
		rc.pubFails++
		if time.Since(rc.publishingAt) > a.queueWait() {
			a.closeRemote(c, rc, "remote tool "+rc.req.Name+": could not queue the call for pool "+rc.pool+" within "+a.queueWait().String()+": "+m.err.Error())
			return
		}
		delay := min(WorkerHeartbeat<<min(rc.pubFails-1, 4), 2*time.Second)
		self, root, id, delivery := c.Self(), a.h.system.Root, m.callID, m.delivery
		time.AfterFunc(delay, func() { root.Send(self, &republishCall{callID: id, delivery: delivery}) })
		return
	}
	rc.publishing, rc.inFlight = false, nil
	rc.lastSeen = time.Now()
	// queued with heard set (a worker reported before the stream's
	// acknowledgement came) leaves the call to the heartbeat deadline;
	// the message is deleted, if still there, once the call returns.
	rc.queued, rc.seq, rc.queuedAt, rc.checkedAt = true, m.seq, time.Now(), time.Now()
}

// takeOut deletes the queued message of pooled call rc from the pool
// stream, or with look only looks it up, reporting a dequeuedCall to self
// when self is not nil.
func (a *schedulerActor) takeOut(self *actor.PID, rc *remoteCall, look bool) {
	rc.takingOut = true
	h, root, seq, id, delivery := a.h, a.h.system.Root, rc.seq, rc.req.CallID, rc.sent
	h.background(func() {
		ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
		defer cancel()
		err := h.dequeue(ctx, seq, look)
		if self != nil {
			root.Send(self, &dequeuedCall{callID: id, delivery: delivery, look: look, err: err})
		}
	})
}

// dequeue deletes the message at seq from the pool stream, or with look
// only looks it up.
func (h *Host) dequeue(ctx context.Context, seq uint64, look bool) error {
	st, err := h.workerQueue(ctx)
	if err != nil {
		return err
	}
	if look {
		_, err = st.GetMsg(ctx, seq)
		return err
	}
	return st.DeleteMsg(ctx, seq)
}

// onDequeued fails a pooled call whose queued message it deleted (no
// worker took it within the queue wait); if a worker had taken it, the
// heartbeat deadline applies from now.
func (a *schedulerActor) onDequeued(c actor.Context, m *dequeuedCall) {
	rc := a.remote[m.callID]
	if rc == nil || rc.sent != m.delivery || rc.heard {
		return
	}
	rc.takingOut = false
	switch {
	case m.look && m.err == nil:
		rc.checkedAt = time.Now() // still waiting for a worker
	case m.look && errors.Is(m.err, jetstream.ErrMsgNotFound):
		// Gone, and no worker reported on it (a worker reports before it
		// acknowledges): lost with the stream. Send it again.
		if rc.sent < MaxDeliveries {
			if err := a.deliver(c, rc); err == nil {
				a.h.log.Info("remote tool call lost from its pool's queue, sent again", "tool", rc.req.Name, "pool", rc.pool, "call_id", m.callID, "delivery", rc.sent)
				return
			}
		}
		a.closeRemote(c, rc, "remote tool "+rc.req.Name+": the call was lost from pool "+rc.pool+"'s queue (sent "+strconv.Itoa(rc.sent)+" times)")
	case m.err == nil:
		a.closeRemote(c, rc, "remote tool "+rc.req.Name+": no worker of pool "+rc.pool+" took the call within "+a.queueWait().String())
	case errors.Is(m.err, jetstream.ErrMsgNotFound):
		rc.queued, rc.lastSeen = false, time.Now()
	default:
		a.h.log.Warn("take a queued remote tool call back", "tool", rc.req.Name, "pool", rc.pool, "call_id", m.callID, "err", m.err)
	}
}

// queueWait is how long a pooled call may wait in its pool's stream.
func (a *schedulerActor) queueWait() time.Duration {
	if a.h.cfg.WorkerQueueWait > 0 {
		return a.h.cfg.WorkerQueueWait
	}
	return DefaultWorkerQueueWait
}

// startTicker sends the actor a checkRemote every heartbeat interval until
// it stops.
func (a *schedulerActor) startTicker(c actor.Context) {
	a.stop = make(chan struct{})
	self, stop, root := c.Self(), a.stop, a.h.system.Root
	go func() {
		t := time.NewTicker(WorkerHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				root.Send(self, &checkRemote{})
			}
		}
	}()
}

// checkRemote sends again each remote call no report of which arrived for
// MissedHeartbeats intervals; a call sent MaxDeliveries times fails.
func (a *schedulerActor) checkRemote(c actor.Context) {
	now := time.Now()
	deadline := now.Add(-protocol.HeartbeatDeadline)
	for id, rc := range a.remote {
		if rc.publishing || rc.resolving {
			continue // onQueued bounds it; a return is being read
		}
		if rc.queued && !rc.heard {
			// Waiting in the pool stream for a worker with room.
			switch {
			case rc.takingOut:
			case now.Sub(rc.queuedAt) > a.queueWait():
				a.takeOut(c.Self(), rc, false)
			case now.Sub(rc.checkedAt) > queueCheckEvery:
				a.takeOut(c.Self(), rc, true)
			}
			continue
		}
		if rc.lastSeen.After(deadline) {
			continue
		}
		if rc.sent < MaxDeliveries {
			if err := a.deliver(c, rc); err == nil {
				a.h.log.Info("remote tool call sent again", "tool", rc.req.Name, "call_id", id, "delivery", rc.sent)
				continue
			}
		}
		a.closeRemote(c, rc, "remote tool "+rc.req.Name+": no worker reported on the call (sent "+strconv.Itoa(rc.sent)+" times)")
	}
}

// closeRemote gives up on remote call rc: it returns as an execution
// failure saying msg.
func (a *schedulerActor) closeRemote(c actor.Context, rc *remoteCall, msg string) {
	id := rc.req.CallID
	delete(a.remote, id)
	a.returned[id] = true
	a.open--
	a.fail(c, rc.req, msg)
	if a.batch.sequential && a.next < len(a.batch.calls) {
		a.send(c)
	}
}

// cancelRemote takes the pooled calls no worker took yet out of the pool
// stream and, with cancel, publishes a cancel for every open remote call.
func (a *schedulerActor) cancelRemote(cancel bool) {
	for _, rc := range a.remote {
		if p := rc.inFlight; p != nil && !p.state.CompareAndSwap(publishPending, publishWithdrawn) {
			// Stored, and the acknowledgement is on its way to this
			// actor, which stops before it arrives.
			rc.queued, rc.seq = true, p.seq.Load()
		}
		if rc.queued && (!rc.heard || rc.sent > 1) {
			a.takeOut(nil, rc, false)
		}
		if !cancel {
			continue
		}
		if subject, err := WorkerCancelSubject(a.h.subj, rc.req.SessionID, rc.req.RunID, rc.req.CallID); err == nil {
			_ = a.h.cfg.Conn.Publish(subject, nil)
		}
	}
	a.remote = nil
}

// fail reports a call that could not be sent as an execution failure.
func (a *schedulerActor) fail(c actor.Context, call ToolRequest, msg string) {
	content, _ := json.Marshal(msg)
	ret := toolsets.Return{CallID: call.CallID, ToolName: call.Name, Kind: toolsets.KindExecution, IsError: true,
		Content: content, Control: &toolsets.Control{Message: msg}, Hooks: a.beforeRecs[call.CallID]}
	c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: ToolReport{Type: ReportReturned, CallID: call.CallID, Tool: call.Name, Return: &ret}})
	a.maybeDone(c)
}

func (a *schedulerActor) maybeDone(c actor.Context) {
	if !a.done && a.open == 0 && a.next == len(a.batch.calls) {
		a.done = true
		c.Send(a.parent, &batchFinished{runID: a.batch.runID})
		c.Stop(c.Self())
	}
}

// workerQueue returns the pool stream's handle, looking it up (a JetStream
// API request) the first time only: deletes and lookups of queued calls
// address the stream by name, so the handle stays good.
func (h *Host) workerQueue(ctx context.Context) (jetstream.Stream, error) {
	h.poolMu.Lock()
	defer h.poolMu.Unlock()
	if h.poolStream != nil {
		return h.poolStream, nil
	}
	st, err := h.js.Stream(ctx, WorkerQueueStream(h.subj))
	if err != nil {
		return nil, err
	}
	h.poolStream = st
	return st, nil
}
