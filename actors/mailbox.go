package actors

import (
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// carried is a message whose sender runs the receiving session's mailbox
// itself once it has posted it (Host.carry, runner.deliver): a goroutine
// that would otherwise hand the message to a dispatcher goroutine and end
// (a model request's, a local call's, a timer's) processes the session's
// messages itself. A hand-over between goroutines costs a wake-up of
// another thread (a futex call on each side, several per run); a carried
// message costs none. Commands are not carried: their callers must stay
// free to leave at their context's end.
type carried interface {
	markCarried()
	isCarried() bool
}

// carriedFlag makes a message type carried: set by its carrier, and not
// by the actors that send the same type the usual way (a scheduler
// actor's toolMsg).
type carriedFlag struct{ carry bool }

func (f *carriedFlag) markCarried()    { f.carry = true }
func (f *carriedFlag) isCarried() bool { return f.carry }

// carryBudget is how many messages a carrier processes before it hands
// the rest of the mailbox to the dispatcher: a carrier of a busy session
// (a batch's calls all reporting) gets back to its own work.
const carryBudget = 64

// mailbox is the mailbox of a session actor: protoactor's mailbox
// contract (system messages first, suspension, failures escalated), with
// two differences. A carried message is not scheduled on the dispatcher:
// its sender runs the mailbox (carry). And Started, which Spawn posts, is
// not scheduled either: the host spawns a session actor only to hand it a
// message, which runs the mailbox (a carried one in the sender's
// goroutine, any other on the dispatcher). Mailbox middlewares are not
// supported (the host uses none).
type mailbox struct {
	mu        sync.Mutex
	sys, user fifo
	status    atomic.Int32 // idle or running
	suspended atomic.Bool
	invoker   actor.MessageInvoker
	dispatch  actor.Dispatcher
	// taking: the goroutine running the mailbox takes the first task the
	// actor starts (next) and runs it when the mailbox is idle again
	// (see task); only the running goroutine reads or writes them.
	taking bool
	next   task
	// run is process for the dispatcher, made once (by the goroutine that
	// set the mailbox running first).
	run func()
	// newStream: the actor's session has no events (Host.StartNew); its
	// first incarnation reads and clears it when it starts.
	newStream bool
}

const (
	boxIdle int32 = iota
	boxRunning
)

var _ actor.Mailbox = (*mailbox)(nil)

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) {
	m.push(&m.user, msg)
	if c, ok := msg.(carried); !ok || !c.isCarried() {
		m.schedule()
	}
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.push(&m.sys, msg)
	if _, started := msg.(*actor.Started); !started {
		m.schedule()
	}
}

// RegisterHandlers implements actor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, d actor.Dispatcher) {
	m.invoker, m.dispatch = invoker, d
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.user.n
}

func (m *mailbox) push(q *fifo, msg any) {
	m.mu.Lock()
	q.push(msg)
	m.mu.Unlock()
}

// pop returns the next message: a system one first, a user one unless
// the mailbox is suspended; nil when there is none.
func (m *mailbox) pop() (msg any, system bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sys.n > 0 {
		return m.sys.pop(), true
	}
	if m.user.n == 0 || m.suspended.Load() {
		return nil, false
	}
	return m.user.pop(), false
}

// fifo is a queue of messages in a ring that grows (from one of its own
// of four, which most sessions never outgrow).
type fifo struct {
	ring    []any
	head, n int
	small   [4]any
}

func (q *fifo) push(v any) {
	if q.ring == nil {
		q.ring = q.small[:]
	}
	if q.n == len(q.ring) {
		ring := make([]any, 2*len(q.ring))
		for i := range q.n {
			ring[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = ring, 0
	}
	q.ring[(q.head+q.n)%len(q.ring)] = v
	q.n++
}

func (q *fifo) pop() any {
	v := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return v
}

// schedule runs the mailbox on the dispatcher unless it runs already.
func (m *mailbox) schedule() {
	if m.status.CompareAndSwap(boxIdle, boxRunning) {
		m.dispatch.Schedule(m.dispatched())
	}
}

// dispatched returns the mailbox's run for the dispatcher. Only the
// goroutine that set the mailbox running calls it.
func (m *mailbox) dispatched() func() {
	if m.run == nil {
		m.run = func() { m.process(-1, false) }
	}
	return m.run
}

// carry runs the mailbox in the calling goroutine unless it runs
// already (then its runner reads the carrier's message): up to
// carryBudget messages, the rest on the dispatcher. Taking, it returns
// the first task the actor started meanwhile, for the caller to run.
func (m *mailbox) carry(taking bool) task {
	if m.status.CompareAndSwap(boxIdle, boxRunning) {
		return m.process(carryBudget, taking)
	}
	return nil
}

// process runs the mailbox, which the caller set running, until it is
// empty (or, budget ≥ 0, for budget messages, then hands it to the
// dispatcher still running), then sets it idle, looking again for a
// message posted meanwhile. Taking, it returns the first task the actor
// started.
func (m *mailbox) process(budget int, taking bool) (t task) {
	for {
		m.taking = taking && t == nil
		for {
			if budget == 0 {
				t = m.take(t)
				m.dispatch.Schedule(m.dispatched())
				return t
			}
			if !m.runOne() {
				break
			}
			if budget > 0 {
				budget--
			}
		}
		t = m.take(t)
		m.status.Store(boxIdle)
		if !m.runnable() || !m.status.CompareAndSwap(boxIdle, boxRunning) {
			return t
		}
	}
}

// take returns t, or else the task the actor left for the running
// goroutine, and stops the mailbox taking.
func (m *mailbox) take(t task) task {
	if t == nil {
		t = m.next
	}
	m.next, m.taking = nil, false
	return t
}

// offer leaves t for the goroutine running the mailbox when it takes a
// task and has none yet, and reports whether it did. Only the actor (so
// the running goroutine) calls it.
func (m *mailbox) offer(t task) bool {
	if !m.taking || m.next != nil {
		return false
	}
	m.next = t
	return true
}

// runnable reports whether a message waits that the mailbox would run.
func (m *mailbox) runnable() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sys.n > 0 || (m.user.n > 0 && !m.suspended.Load())
}

// runOne invokes the next message, and reports whether there was one. A
// panic escalates as protoactor's mailbox escalates it.
func (m *mailbox) runOne() (ran bool) {
	msg, system := m.pop()
	if msg == nil {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	if !system {
		m.invoker.InvokeUserMessage(msg)
		return true
	}
	switch msg.(type) {
	case *actor.SuspendMailbox:
		m.suspended.Store(true)
	case *actor.ResumeMailbox:
		m.suspended.Store(false)
	default:
		m.invoker.InvokeSystemMessage(msg)
	}
	return true
}

// task is work a session actor starts outside its mailbox (a model
// request, a local tool call): it hands its reports to the actor through
// its runner and returns the message it ends with (nil: none). A task runs
// in a goroutine of its own, or in the goroutine of a runner that carries
// the actor's mailbox when the actor starts it (taking): a model request's
// goroutine runs the tool calls the reply asks for, a call's goroutine the
// next model request, without a hand-over between goroutines.
type task func(r *runner) carried

// runner is a goroutine that runs tasks of one session actor. A task may
// hand reports to deliver from goroutines of its own (a tool's progress),
// even after it returned: mu orders those deliveries with run, and once run
// has no task left (done) a delivery takes none, so a taken task is never
// left without a goroutine to run it.
type runner struct {
	h    *Host
	ref  sessionRef
	mu   sync.Mutex
	next []task // taken while carrying, run after the current task
	done bool
}

// deliver carries msg to the runner's actor, taking the task it starts
// while the runner runs.
func (r *runner) deliver(msg carried) {
	msg.markCarried()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.system.Root.Send(r.ref.pid, msg)
	if t := r.ref.box.carry(!r.done); t != nil {
		r.next = append(r.next, t)
	}
}

// start starts task t of the actor: in the goroutine that runs the
// mailbox when it takes one (see task), in a new runner otherwise, on a
// goroutine of the host's dispatcher (whose stacks have grown already).
func (a *sessionActor) start(t task) {
	if a.box.offer(t) {
		return
	}
	r := &runner{h: a.h, ref: a.ref()}
	a.h.dispatch.Schedule(func() { r.run(t) })
}

// run runs t, delivers its message, and runs the tasks taken meanwhile,
// until none is left. A task that panics ends with a taskPanic.
func (r *runner) run(t task) {
	for t != nil {
		if msg := runTask(t, r); msg != nil {
			r.deliver(msg)
		}
		r.mu.Lock()
		t = nil
		if len(r.next) > 0 {
			t, r.next = r.next[0], r.next[1:]
		} else {
			r.done = true
		}
		r.mu.Unlock()
	}
}

// runTask runs t with r; a panic of t (user code it calls: a model, an
// output validator, a hook) ends it with a taskPanic for the actor, which
// fails the run, rather than crashing the process.
func runTask(t task, r *runner) (msg carried) {
	defer func() {
		if p := recover(); p != nil {
			msg = &taskPanic{value: p, stack: debug.Stack()}
		}
	}()
	return t(r)
}
