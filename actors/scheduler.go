package actors

import (
	"encoding/json"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/toolsets"
)

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

// schedulerActor runs one tool batch: it sends each call as a request on
// weft.tool.<name> (all at once, or one after another when the batch is
// sequential) and tells the session that the call's first attempt started,
// forwards the tool actors' reports to the session in the order they
// arrive, and stops when every call has returned. The session
// hands the returns to the model in model order.
type schedulerActor struct {
	h      *Host
	batch  *scheduleBatch
	parent *actor.PID
	inbox  string // the reply subject of the batch's calls
	next   int
	open   int
	done   bool
}

// Receive implements actor.Actor.
func (a *schedulerActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.parent = c.Parent()
		a.inbox = a.h.newReplySubject(c.Self())
		if a.batch.sequential {
			a.send(c)
		} else {
			for range a.batch.calls {
				a.send(c)
			}
		}
	case *ToolReport:
		c.Send(a.parent, &toolMsg{runID: a.batch.runID, report: *m})
		if m.Type != ReportReturned {
			return
		}
		a.open--
		if a.batch.sequential && a.next < len(a.batch.calls) {
			a.send(c)
		}
		a.maybeDone(c)
	case *actor.Stopping:
		a.h.replies.Delete(a.inbox)
	}
}

func (a *schedulerActor) send(c actor.Context) {
	call := a.batch.calls[a.next]
	a.next++
	a.open++
	subject, err := a.h.subj.Tool(call.Name)
	if err == nil {
		var data []byte
		data, err = json.Marshal(&call)
		if err == nil {
			err = a.h.cfg.Conn.PublishRequest(subject, a.inbox, data)
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
