package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// DefaultSessionIdle is how long a settled session's actor stays in
// memory without a message before it stops (HostConfig.SessionIdle).
const DefaultSessionIdle = 30 * time.Second

// Passivation: a session actor whose session has settled (no run running:
// every run ended, or the active one waits for decisions) and that has
// received nothing for HostConfig.SessionIdle stops, and the host forgets
// it. The next command rebuilds it from the log, as recovery does, so a
// node that serves a steady stream of sessions holds only the ones in use.
//
// The actor keeps its own idle timer (protoactor's receive timeout races
// with the actor's own goroutine under the race detector): armed whenever
// a message leaves the actor quiet, it sends idleCheck, and the actor
// stops if nothing came since for SessionIdle.
//
// A command that reaches the actor after it decided to stop (it was
// already in the mailbox) is handed back to the host, which delivers it to
// the session's next actor: the stopping actor appends nothing more.

func (h *Host) sessionIdle() time.Duration {
	if h.cfg.SessionIdle > 0 {
		return h.cfg.SessionIdle
	}
	return DefaultSessionIdle
}

// quiet reports whether the actor has nothing under way: no run running,
// no event queued, no resume held, no toolset exit awaited.
func (a *sessionActor) quiet() bool {
	if len(a.queued) > 0 || len(a.held) > 0 || a.exits > 0 || len(a.handling) > 0 {
		return false // (error handlers running: their outcomes come back here)
	}
	if a.st == nil {
		return true // never loaded: nothing of it is in memory
	}
	r := a.st.ActiveRun()
	return r == nil || r.Status != StatusRunning
}

// idleCheck is the idle timer's message to its session actor.
type idleCheck struct{ carriedFlag }

// touch notes that the actor handled msg: any message but the idle
// timer's own is activity.
func (a *sessionActor) touch(msg any) {
	if _, ok := msg.(*idleCheck); !ok {
		a.lastActive = time.Now()
	}
}

// armIdle starts the idle timer when the actor is quiet and the timer is
// not running: it fires after what is left of the idle period.
func (a *sessionActor) armIdle(self *actor.PID) {
	if a.idleArmed || a.passivated || a.down || !a.quiet() {
		return
	}
	left := a.h.sessionIdle() - time.Since(a.lastActive)
	a.idleArmed = true
	if a.idleTimer == nil {
		a.idleTimer = time.AfterFunc(left, func() { a.h.carry(sessionRef{pid: self, box: a.box}, &idleCheck{}) })
		return
	}
	a.idleTimer.Reset(left)
}

// onIdleCheck passivates the actor when it has been quiet for the idle
// period; otherwise armIdle (after Receive) waits for what is left.
func (a *sessionActor) onIdleCheck(c actor.Context) {
	a.idleArmed = false
	if time.Since(a.lastActive) >= a.h.sessionIdle() {
		a.passivate(c)
	}
}

// stopIdle stops the idle timer of a stopping actor.
func (a *sessionActor) stopIdle() {
	if a.idleTimer != nil {
		a.idleTimer.Stop()
	}
}

// passivate stops the actor if its session is quiet: the host forgets it
// first (under the lock its command deliveries take), so a command sent
// from then on spawns the session's next actor.
func (a *sessionActor) passivate(c actor.Context) {
	if !a.quiet() {
		return
	}
	a.leave(c)
}

// leave stops the actor: the host forgets it (if it is still the
// session's actor), so a command sent from then on spawns the session's
// next actor, and the actor poisons itself.
func (a *sessionActor) leave(c actor.Context) {
	h := a.h
	h.mu.Lock()
	if cur, ok := h.sessions[a.id]; ok && cur.pid.Equal(c.Self()) {
		delete(h.sessions, a.id)
	}
	h.mu.Unlock()
	a.passivated = true
	// A poison pill, not a stop: it is a message, so the commands already
	// in the mailbox come first, and go to the next actor (redeliver).
	c.Poison(c.Self())
}

// redeliver hands msg, which reached the actor after it passivated, back
// to the host: a command goes to the session's next actor; anything else
// concerns nothing under way and is dropped. A broken actor's commands
// are refused instead (unavailable: the caller's retry rebuilds the
// actor), so that a panic that comes back in every actor does not pass
// them from one to the next for good.
func (a *sessionActor) redeliver(msg any) {
	if cmd, ok := msg.(*command); ok {
		if a.broken {
			cmd.answer(CommandReply{Error: commandError(cmd.verb, a.id, ErrUnavailable, "the session's actor stopped after a panic; retry")})
			return
		}
		if err := a.h.sendCommand(a.id, cmd, false); err != nil {
			cmd.answer(CommandReply{Error: commandError(cmd.verb, a.id, ErrUnavailable, "%v", err)})
		}
	}
}
