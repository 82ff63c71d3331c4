package actors

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"
)

// FailPanic is the failure kind of a run whose session panicked: in its
// actor's handling of a message (user code the actor calls, such as a
// model's ModelName; an event whose data did not encode, see newRecord; a
// bug of the runtime) or in one of its tasks (a model's Request, an output
// validator).
const FailPanic = "panic"

// errSessionStopped is the cause a run's context is cancelled with when
// its session's actor stops before the run ended.
var errSessionStopped = errors.New("session stopped")

// A panic in the session actor's handling of a message fails closed
// (settlePanic): the actor does not escalate it (a restarted actor would
// carry the run on from a log its memory no longer matches, with nobody
// told), it fails the session's active run through the normal path
// instead. The actor forgets what its memory holds beyond the log (the
// events applied ahead of their append, the tool events queued), reads its
// state from the stream again, and appends run.failed (kind FailPanic, the
// panic's value as its message; the stack goes to the host's log only):
// the run's toolsets are exited, its error handlers run, its watchers hear
// the outcome, and the next command finds a session that settled. A
// command the actor was handling when it panicked, and has not answered,
// is answered with ErrInternal.
//
// A panic of a task of the session (user code run on the goroutine that
// calls the model: the model, the output validators) is settled the same
// way: the runner recovers it and
// hands it to the actor (taskPanic), rather than crashing the process.
//
// When even that fails (the stream cannot be read, the append fails, or
// the failing panics again), the actor stops, as a passivated one does:
// the command, and those left in its mailbox, are answered with
// ErrUnavailable, the run's work on this node is cancelled (its remote
// calls handed over), the run's watchers hear that it was lost
// (Outcome.Lost: nothing waits for its context to end), and the next
// command rebuilds the session's actor from the log, which carries the run
// on (or fails it again).

// settlePanic is deferred first by Receive: it recovers a panic of the
// message's handling and settles the session (see above).
func (a *sessionActor) settlePanic(c actor.Context) {
	if p := recover(); p != nil {
		a.panicked(c, "session actor", p, debug.Stack())
	}
}

// taskPanic is what a task of the session (a model request, with its
// hooks and output validators; a batch of local calls) ends with when it
// panicked: the runner recovers the panic (runTask), and the actor settles
// the session as for a panic of its own. The task's run is not known: the
// session's active run fails. (A task of a run that ended already could
// fail the next run; such a task ends with its run's context, so that is
// rare, and it fails closed.)
type taskPanic struct {
	carriedFlag
	value any
	stack []byte
}

// panicked settles the session after panic p of where, while the actor
// handled c's message (see above).
func (a *sessionActor) panicked(c actor.Context, where string, p any, stack []byte) {
	msg := fmt.Sprintf("panic: %v", p)
	runID := a.panicRun()
	a.h.log.Error(where+" panicked", "session", a.id, "run", runID, "message", fmt.Sprintf("%T", c.Message()),
		"panic", fmt.Sprint(p), "stack", string(stack))
	cmd, _ := c.Message().(*command)
	if _, stopping := c.Message().(*actor.Stopping); stopping || a.passivated {
		// The actor is going away: its next one reads the log.
		a.answerPanic(cmd, ErrInternal, msg)
		return
	}
	if err := a.failPanicked(c, msg); err != nil {
		a.h.log.Error(where+" panicked, and failing the run failed: stopping", "session", a.id, "run", runID, "err", err)
		a.answerPanic(cmd, ErrUnavailable, fmt.Sprintf("%s; recording the failure failed (%v); retry", msg, err))
		a.stopPanicked(c, fmt.Sprintf("%s; recording the failure failed: %v", msg, err))
		return
	}
	a.answerPanic(cmd, ErrInternal, msg)
}

// panicRun is the id of the run a panic concerns: the one the actor
// drives, or the session's active one ("" when none is known).
func (a *sessionActor) panicRun() string {
	if a.run != nil {
		return a.run.id
	}
	if a.st != nil {
		if r := a.st.ActiveRun(); r != nil {
			return r.ID
		}
	}
	return ""
}

// failPanicked reads the session's state from its stream again and fails
// its active run with FailPanic (see settlePanic); it returns why it could
// not, a panic of its own included.
func (a *sessionActor) failPanicked(c actor.Context, msg string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic again: %v", p)
		}
	}()
	if a.down {
		return nil // stood down: the session's owner drives it
	}
	a.pend, a.queued = nil, nil
	if err := a.load(); err != nil {
		return err
	}
	if r := a.st.ActiveRun(); r != nil && !r.Status.Ended() {
		if err := a.append(a.core().fail(r, FailPanic, msg).recs...); err != nil {
			return err
		}
		a.do(c, a.core().dueHandlers(), nil) // the run's error handlers
	}
	a.releaseHeld(c) // the resumes held for the run: refused as for any ended run
	return nil
}

// answerPanic answers cmd (nil: none), unless it was answered already,
// with sentinel and msg.
func (a *sessionActor) answerPanic(cmd *command, sentinel error, msg string) {
	if cmd == nil {
		return
	}
	cmd.answer(CommandReply{Error: commandError(cmd.verb, a.id, sentinel, "%s", msg)})
}

// stopPanicked stops an actor that could not settle its session after a
// panic (why): the host forgets it, the commands in its mailbox go to the
// session's next actor (as a passivated actor's do), the run's work on
// this node is cancelled, and the run's watchers are told it was lost
// (Host.lose): the command that started it was answered long ago, when the
// panic came in the handling of anything else (a model's reply, a tool's
// report). The watchers are told last, once the host forgot the actor, so
// that a command one sends on hearing it reaches the session's next actor.
func (a *sessionActor) stopPanicked(c actor.Context, why string) {
	lost := a.unsettledRun()
	a.refuseHeld()
	a.endRun(errSessionStopped)
	a.pend, a.queued = nil, nil
	a.broken = true
	a.leave(c)
	if lost != "" {
		a.h.lose(a.id, lost, why)
	}
}

// unsettledRun is the id of the run a stopping actor leaves unsettled:
// the one it drives, or the session's active one, unless the state it
// holds shows that run settled (its watchers heard so, or hear it from
// the next actor); "" when none.
func (a *sessionActor) unsettledRun() string {
	id := a.panicRun()
	if id == "" || a.st == nil {
		return id
	}
	if r := a.st.Runs[id]; r != nil && r.Status.Settled() {
		return ""
	}
	return id
}
