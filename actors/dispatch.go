package actors

import (
	"sync"
	"sync/atomic"
	"time"
)

// mailboxIdle is how long a mailbox goroutine of the dispatcher waits for
// another mailbox to run before it exits.
const mailboxIdle = time.Second

// dispatcher runs actor mailboxes on cached goroutines. protoactor's
// default dispatcher starts a goroutine per mailbox run, whose stack
// starts small and is grown (copied) through the session actor's deep call
// chains on every burst of messages: 10-20% of a run's CPU in
// BenchmarkRun. A cached goroutine keeps its grown stack. A mailbox run is
// handed to an idle goroutine, or to a new one when none is idle, so a run
// that blocks (a store append) never holds another up.
type dispatcher struct {
	idle    chan func() // unbuffered: a send succeeds only into an idle goroutine
	stop    chan struct{}
	once    sync.Once
	idleFor time.Duration
	live    atomic.Int32 // goroutines running or idle
	waiting atomic.Int32 // goroutines idle (for tests)
	started atomic.Int32 // goroutines started (for tests)
}

func newDispatcher() *dispatcher {
	return &dispatcher{idle: make(chan func()), stop: make(chan struct{}), idleFor: mailboxIdle}
}

// Schedule implements actor.Dispatcher.
func (d *dispatcher) Schedule(fn func()) {
	select {
	case d.idle <- fn:
	default:
		d.live.Add(1)
		d.started.Add(1)
		go d.work(fn)
	}
}

// Throughput implements actor.Dispatcher: the messages a mailbox run
// processes before it yields (protoactor's default).
func (d *dispatcher) Throughput() int { return 300 }

func (d *dispatcher) work(fn func()) {
	defer d.live.Add(-1)
	t := time.NewTimer(d.idleFor)
	defer t.Stop()
	for {
		fn()
		t.Reset(d.idleFor)
		d.waiting.Add(1)
		select {
		case fn = <-d.idle:
			d.waiting.Add(-1)
		case <-t.C:
			d.waiting.Add(-1)
			return
		case <-d.stop:
			d.waiting.Add(-1)
			return
		}
	}
}

// close makes the idle goroutines exit; runs under way finish first, and
// a run scheduled later still runs (on a goroutine that then exits).
func (d *dispatcher) close() { d.once.Do(func() { close(d.stop) }) }
