package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/toolsets"
)

// advance asks the session actor to carry its active run on (recovery).
type advance struct{}

// flushTools asks the session actor to append the tool events it queued.
type flushTools struct{}

// sessionActor owns one session: it is the shell around the session core
// (core.go). Its state is only the fold of the session's events; on every
// message it asks the core, appends the events the core decided with the
// state's version as the expected version, applies them, performs the
// effects, and asks again while the core says to carry on (do). Model
// requests, toolset preparation and tool calls run elsewhere (owned
// goroutines, the lifecycle actor, schedulers) and report back with
// messages, so Receive never waits for them; only the store appends and
// the stream reads happen in Receive.
//
// st is nil until the actor has read its stream (see load): a failed read
// is retried on the next command (or advance), and until one succeeds the
// actor appends nothing and refuses commands with unavailable.
type sessionActor struct {
	h       *Host
	id      string
	stream  string        // events.SessionStream(id)
	st      *SessionState // nil: not loaded yet (see load)
	loadErr error         // why the last load failed
	self    *actor.PID
	box     *mailbox   // the actor's mailbox (see carried)
	life    *actor.PID // the lifecycle actor: spawned by the first preparation with toolsets
	run     *runMem
	// queued are tool events (tool.started, tool.retried, tool.progress,
	// tool.returned) not appended yet: the actor appends them together
	// when it has read the tool reports already in its mailbox (a
	// flushTools message it sends itself), and before it handles any
	// other message.
	queued   []record
	flushing bool
	// pend are events applied ahead of their append, to go in the next
	// one (see session_fuse.go); always appended before Receive returns.
	pend *pendingAppend
	// down: an append found another writer's events (the fence); the
	// actor stands down and appends nothing more (see "Ownership").
	down bool
	// held are resumes waiting for their run's tools to be prepared, to
	// check reviewed arguments (see core.hold).
	held []*command
	// exits counts the toolset exits asked of the lifecycle actor and not
	// reported yet; passivated: the actor stopped itself (see passivate).
	exits      int
	passivated bool
	// broken: the actor stopped after a panic it could not settle (see
	// settlePanic); the commands left in its mailbox are refused.
	broken bool
	// The idle timer (see passivate.go): when the actor last handled a
	// message, and whether the timer is running.
	lastActive time.Time
	idleTimer  *time.Timer
	idleArmed  bool
	// store bounds the actor's appends (see storeCtx).
	store storeCtx
	// handling are the error handlers running (session_handlers.go).
	handling map[string]bool
}

// runMem is what the actor keeps in memory about the active run, beside
// the state: never needed to rebuild, only to act. f are the facts the
// core decides with; the rest is what the shell acts with (the run's
// context, its scheduler, its toolsets' drivers).
type runMem struct {
	id        string
	spec      *AgentSpec
	entry     *runEntry
	f         runFacts
	scheduler batchRunner    // the batch under way, nil when none is
	batch     *scheduleBatch // the batch under way
	// lcs drive the run's toolsets (the agent's, then the run's own);
	// prepared says whether any was prepared for the run in this process
	// (so that it is exited when the run ends).
	lcs      []*toolsets.Lifecycle
	prepared bool
	meta     map[string]any
}

func newSessionActor(h *Host, id, stream string, box *mailbox) *sessionActor {
	return &sessionActor{h: h, id: id, box: box, stream: stream, store: storeCtx{parent: h.storeLife}}
}

// ref is the actor as its host keeps it (to carry messages to it).
func (a *sessionActor) ref() sessionRef { return sessionRef{pid: a.self, box: a.box} }

// Receive implements actor.Actor.
func (a *sessionActor) Receive(c actor.Context) {
	defer a.settlePanic(c) // first: it sees the other deferred calls' panics too
	a.touch(c.Message())
	defer a.armIdle(c.Self())
	defer a.flushHeld()
	if a.passivated {
		if _, ok := c.Message().(*actor.Stopping); ok {
			// The poison pill stops it: release what it holds (its store
			// deadline's timer lives 30 s otherwise).
			a.stopIdle()
			a.store.release()
			return
		}
		a.redeliver(c.Message())
		return
	}
	if a.down {
		// Stood down: refuse commands (the caller retries and reaches
		// the owner), ignore the rest until the actor stops.
		switch m := c.Message().(type) {
		case *command:
			a.onCommand(c, m)
			return
		case *actor.Stopping:
		default:
			return
		}
	}
	if a.st == nil {
		// Not loaded: the actor started, but its stream could not be
		// read. A command or an advance tries again; nothing else can
		// concern a session whose state is not known.
		switch m := c.Message().(type) {
		case *command:
			if a.load() != nil {
				a.onCommand(c, m) // refuses it: unavailable
				return
			}
			a.advance(c) // what Started does after a load
		case *advance:
			if a.load() != nil {
				return
			}
		case *idleCheck:
			a.onIdleCheck(c)
			return
		case *actor.Started, *actor.Stopping:
		default:
			return
		}
	}
	switch c.Message().(type) {
	case *command, *advance, *preparedReply, *modelReply, *batchFinished, *exitedReply:
		a.flush(c)
	}
	switch m := c.Message().(type) {
	case *actor.Started:
		a.self = c.Self()
		if a.box.newStream {
			a.box.newStream = false // a restart reads the stream
			a.start0()
		} else if a.load() == nil {
			a.advance(c)
		}
	case *command:
		a.onCommand(c, m)
	case *advance:
		a.advance(c)
	case *preparedReply:
		a.onPrepared(c, m)
	case *exitedReply:
		a.onExited(m)
	case *modelReply:
		a.onModel(c, m)
	case *toolMsg:
		a.onTool(c, m)
	case *flushTools:
		a.flushing = false
		a.flush(c)
	case *batchFinished:
		a.onBatchFinished(c, m)
	case *handlerDone:
		a.onHandlerDone(c, m)
	case *taskPanic:
		a.panicked(c, "session task", m.value, m.stack)
	case *idleCheck:
		a.onIdleCheck(c)
	case *actor.Stopping:
		a.flushHeld()
		defer a.store.release()
		a.stopIdle()
		a.refuseHeld()
		a.endRun(errSessionStopped)
	}
}

// core returns the session core's view of the actor: its state, the
// active run's facts and the host's lookups.
func (a *sessionActor) core() core {
	k := core{session: a.id, st: a.st, look: a.h, maxMsg: a.h.payload.max(), handling: a.handling}
	if a.run != nil {
		k.f = a.run.f
	}
	return k
}

// do carries decision d out: it takes its facts, appends its events (or
// queues tool events), performs its effects (for cmd, the command it is
// about, if any) and asks the core again while it says to carry on. A
// failed append performs nothing, and answers cmd with its error.
func (a *sessionActor) do(c actor.Context, d decision, cmd *command) {
	if m := a.run; m != nil {
		if d.newFacts && m.id == d.facts.run {
			m.f = d.facts
		}
		if d.returned != "" {
			delete(m.f.inFlight, d.returned)
		}
	}
	if d.queue {
		a.queue(c, d.recs)
		return
	}
	if a.fusable(d) {
		if err := a.hold(d, cmd); err != nil {
			a.replyFailed(d, cmd, err)
			return
		}
		a.advance(c)
		return
	}
	if len(d.recs) > 0 {
		var err error
		if d.split {
			err = a.appendSteps(d.recs...)
		} else {
			err = a.append(d.recs...)
		}
		if err != nil {
			a.replyFailed(d, cmd, err)
			return
		}
	}
	for i := range d.effects.len() {
		e := d.effects.at(i)
		if a.pend != nil && !a.inPlace(e) {
			// Nothing leaves the actor before the held events are stored.
			if err := a.flushPending(); err != nil {
				a.replyFailed(d, cmd, err)
				return
			}
		}
		a.perform(c, e, cmd)
	}
	if d.carryOn {
		a.advance(c)
	} else if endsRun(d.recs) {
		a.do(c, a.core().dueHandlers(), nil) // the run's error handlers
	}
}

// perform performs one effect of a decision.
func (a *sessionActor) perform(c actor.Context, e effect, cmd *command) {
	switch e := e.(type) {
	case effReply:
		a.reply(cmd, e)
	case effHold:
		cmd.held = true
		a.held = append(a.held, cmd)
	case effPrepare:
		a.prepare(c, e)
	case effCallModel:
		a.callModel(e.req)
	case effDispatch:
		a.dispatch(c, e)
	case effRunHandlers:
		a.runHandlers(c, e)
	}
}

// advance asks the core what the active run does next (after every
// change, and on recovery), with the facts of the run it carries on: a
// running run this actor has no memory of yet gets one here.
func (a *sessionActor) advance(c actor.Context) {
	if r := a.st.ActiveRun(); r != nil && r.Status == StatusRunning {
		_, _ = a.mem(r) // an unknown agent fails the run (core.advance)
	}
	a.do(c, a.core().advance(), nil)
}

func (a *sessionActor) onCommand(c actor.Context, cmd *command) {
	if a.st == nil {
		sentinel := ErrInternal
		switch {
		case errors.Is(a.loadErr, ErrUnavailable):
			sentinel = ErrUnavailable
		case errors.Is(a.loadErr, ErrSessionDamaged):
			sentinel = ErrSessionDamaged
		}
		a.reply(cmd, effReply{err: commandError(cmd.verb, a.id, sentinel, "load session: %v", a.loadErr)})
		return
	}
	if a.down {
		a.reply(cmd, effReply{err: commandError(cmd.verb, a.id, ErrSessionOwned, "session moved to another node; retry")})
		return
	}
	body, derr := decodeCommand(cmd)
	a.do(c, a.core().command(cmd.verb, body, derr, cmd.held), cmd)
}

// decodeCommand returns the body of cmd as its verb's command type (nil
// for an unknown verb).
func decodeCommand(cmd *command) (any, error) {
	switch cmd.verb {
	case VerbStart:
		return commandBody[StartCommand](cmd)
	case VerbResume:
		return commandBody[ResumeCommand](cmd)
	case VerbCancel:
		return commandBody[CancelCommand](cmd)
	}
	return nil, nil
}

func (a *sessionActor) onModel(c actor.Context, mr *modelReply) {
	a.do(c, a.core().modelReply(mr), nil)
}

// onPrepared hands a preparation's outcome to the core, once the
// inventory is where the tool host finds the run's registry; then the
// resumes held for it are handled again.
func (a *sessionActor) onPrepared(c actor.Context, p *preparedReply) {
	defer a.releaseHeld(c)
	var search []record
	if m := a.run; m != nil && m.id == p.runID && p.err == nil {
		search = a.searchInitialized(m)
		m.entry.mu.Lock()
		m.entry.reg = p.prep.Registry
		m.entry.mu.Unlock()
		a.h.runs.Store(runKey(a.id, m.id), m.entry)
	}
	a.do(c, a.core().prepared(p, search), nil)
}

func (a *sessionActor) onTool(c actor.Context, tm *toolMsg) {
	a.do(c, a.core().toolReport(tm.runID, tm.report), nil)
}

// queue queues tool events: the actor appends them together when it has
// read the tool reports already in its mailbox (a flushTools message it
// sends itself), and before it handles any other message.
func (a *sessionActor) queue(c actor.Context, recs []record) {
	if len(recs) == 0 {
		return
	}
	a.queued = append(a.queued, recs...)
	if !a.flushing {
		a.flushing = true
		c.Send(c.Self(), &flushTools{})
	}
}

// flush appends the queued tool events.
func (a *sessionActor) flush(c actor.Context) {
	if len(a.queued) == 0 {
		return
	}
	recs := a.queued
	a.queued = nil
	a.do(c, flushed(recs), nil)
	if a.queued == nil {
		// Nothing kept recs (an append copies its records): the next
		// reports reuse its array.
		clear(recs)
		a.queued = recs[:0]
	}
}

func (a *sessionActor) onBatchFinished(c actor.Context, m *batchFinished) {
	if a.run != nil && a.run.id == m.runID {
		a.run.scheduler, a.run.batch = nil, nil
	}
	a.do(c, a.core().batchFinished(m.runID), nil)
}
