package actors

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/toolsets"
)

// AddRemoteTools tells the host that the tools named are served by remote
// tool workers (docs/worker-protocol.md): their calls go to
// <root>.worker.call.<name> instead of to a tool actor, for every agent of
// the host (a local tool of the same name is shadowed). Other tools stay
// local.
func (h *Host) AddRemoteTools(names ...string) {
	for _, n := range names {
		h.remote.Store(n, struct{}{})
	}
}

// IsRemoteTool reports whether calls of tool name go to remote workers.
func (h *Host) IsRemoteTool(name string) bool {
	_, ok := h.remote.Load(name)
	return ok
}

// scheduleBatch starts a scheduler on the calls of a batch.
type scheduleBatch struct {
	runID string
	calls []ToolRequest
	// sequential runs the calls one at a time in model order.
	sequential bool
}

// toolMsg carries a tool actor's report from the scheduler to the session.
type toolMsg struct {
	runID  string
	report ToolReport
}

// batchFinished tells the session that every call of the batch returned.
type batchFinished struct{ runID string }

// remoteCall is a call sent to remote workers that has not returned.
type remoteCall struct {
	req      ToolRequest
	subject  string
	data     []byte
	lastSeen time.Time // when it was last sent or reported on
	sent     int       // deliveries so far
}

// checkRemote makes the scheduler look for silent remote calls.
type checkRemote struct{}

// schedulerActor runs one tool batch: it sends each call as a request on
// weft.node.<node id>.tool.<name> of its own node (all at once, or one after another when the batch is
// sequential) and tells the session that the call's first attempt started,
// forwards the tool actors' reports to the session in the order they
// arrive, and stops when every call has returned. The session
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
	case *ToolReport:
		if a.returned[m.CallID] {
			return // a late or duplicated report of a returned call
		}
		if rc := a.remote[m.CallID]; rc != nil {
			rc.lastSeen = time.Now()
		}
		if m.Type == ReportHeartbeat {
			return
		}
		c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: *m})
		if m.Type != ReportReturned {
			return
		}
		a.returned[m.CallID] = true
		delete(a.remote, m.CallID)
		a.open--
		if a.batch.sequential && a.next < len(a.batch.calls) {
			a.send(c)
		}
		a.maybeDone(c)
	case *checkRemote:
		a.checkRemote(c)
	case *actor.Stopping:
		a.h.replies.Delete(a.inbox)
		if a.stop != nil {
			close(a.stop)
		}
		a.cancelRemote()
	}
}

func (a *schedulerActor) send(c actor.Context) {
	call := a.batch.calls[a.next]
	a.next++
	a.open++
	var err error
	if a.h.IsRemoteTool(call.Name) {
		err = a.sendRemote(c, call)
	} else {
		var subject string
		// Local tools run on this node, which prepared the run: the
		// subject names it.
		subject, err = a.h.subj.NodeTool(a.h.node, call.Name)
		if err == nil {
			var data []byte
			data, err = json.Marshal(&call)
			if err == nil {
				err = a.h.cfg.Conn.PublishRequest(subject, a.inbox, data)
			}
		}
	}
	if err == nil {
		// The first attempt starts when the call is sent; the tool actor
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
	subject, err := WorkerCallSubject(a.h.subj, call.Name)
	if err != nil {
		return err
	}
	if v, ok := a.h.runs.Load(runKey(call.SessionID, call.RunID)); ok {
		e := v.(*runEntry)
		e.mu.RLock()
		call.Metadata = e.meta
		e.mu.RUnlock()
	}
	data, err := json.Marshal(&call)
	if err != nil {
		return err
	}
	rc := &remoteCall{req: call, subject: subject, data: data}
	if err := a.deliver(rc); err != nil {
		return err
	}
	if a.remote == nil {
		a.remote = map[string]*remoteCall{}
		a.startTicker(c)
	}
	a.remote[call.CallID] = rc
	return nil
}

// deliver publishes rc's request once more.
func (a *schedulerActor) deliver(rc *remoteCall) error {
	rc.sent++
	rc.lastSeen = time.Now()
	msg := &nats.Msg{Subject: rc.subject, Reply: a.inbox, Data: rc.data, Header: nats.Header{}}
	msg.Header.Set(HeaderCallID, rc.req.CallID)
	msg.Header.Set(HeaderDelivery, strconv.Itoa(rc.sent))
	msg.Header.Set(HeaderHeartbeat, strconv.FormatInt(WorkerHeartbeat.Milliseconds(), 10))
	return a.h.cfg.Conn.PublishMsg(msg)
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
	deadline := time.Now().Add(-MissedHeartbeats * WorkerHeartbeat)
	for id, rc := range a.remote {
		if rc.lastSeen.After(deadline) {
			continue
		}
		if rc.sent < MaxDeliveries {
			if err := a.deliver(rc); err == nil {
				a.h.log.Info("remote tool call sent again", "tool", rc.req.Name, "call_id", id, "delivery", rc.sent)
				continue
			}
		}
		delete(a.remote, id)
		a.returned[id] = true
		a.open--
		a.fail(c, rc.req, "remote tool "+rc.req.Name+": no worker reported on the call (sent "+strconv.Itoa(rc.sent)+" times)")
		if a.batch.sequential && a.next < len(a.batch.calls) {
			a.send(c)
		}
	}
}

// cancelRemote publishes a cancel for every open remote call.
func (a *schedulerActor) cancelRemote() {
	for _, rc := range a.remote {
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
		Content: content, Control: &toolsets.Control{Message: msg}}
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
