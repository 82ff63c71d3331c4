package actors

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// boxProbe is the invoker and dispatcher of a mailbox under test: it
// records the user messages invoked, fails the test if two goroutines
// ever run the mailbox at once, and queues what the mailbox schedules.
type boxProbe struct {
	t         *testing.T
	mu        sync.Mutex
	got       []any
	inside    atomic.Int32
	scheduled []func()
	onInvoke  func(msg any)
}

func (p *boxProbe) InvokeSystemMessage(msg any) { p.InvokeUserMessage(msg) }
func (p *boxProbe) InvokeUserMessage(msg any) {
	if p.inside.Add(1) != 1 {
		p.t.Error("two goroutines ran the mailbox at once")
	}
	defer p.inside.Add(-1)
	if pm, ok := msg.(*probeMsg); ok {
		msg = pm.v
	}
	p.mu.Lock()
	p.got = append(p.got, msg)
	p.mu.Unlock()
	if p.onInvoke != nil {
		p.onInvoke(msg)
	}
}
func (p *boxProbe) EscalateFailure(reason any, msg any) { p.t.Errorf("failure %v on %v", reason, msg) }
func (p *boxProbe) Schedule(fn func()) {
	p.mu.Lock()
	p.scheduled = append(p.scheduled, fn)
	p.mu.Unlock()
}
func (p *boxProbe) Throughput() int { return 300 }

// runScheduled runs what the mailbox scheduled, as the dispatcher would.
func (p *boxProbe) runScheduled() int {
	p.mu.Lock()
	fns := p.scheduled
	p.scheduled = nil
	p.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return len(fns)
}

// probeMsg is a carried message of the tests; its value is what the probe
// records.
type probeMsg struct {
	carriedFlag
	v any
}

// carry returns a carried message of v.
func carry(v any) *probeMsg {
	m := &probeMsg{v: v}
	m.markCarried()
	return m
}

func newProbedBox(t *testing.T) (*mailbox, *boxProbe) {
	p := &boxProbe{t: t}
	m := &mailbox{}
	m.RegisterHandlers(p, p)
	return m, p
}

// A carried message is not scheduled: its sender runs the mailbox. Any
// other message is scheduled, a carriable type whose flag is not set too.
func TestMailboxCarriedMessageRunsInItsSender(t *testing.T) {
	m, p := newProbedBox(t)
	m.PostUserMessage(carry("a"))
	if len(p.scheduled) != 0 || len(p.got) != 0 {
		t.Fatalf("a carried message was scheduled (%d) or run (%v) before it was carried", len(p.scheduled), p.got)
	}
	if next := m.carry(false); next != nil {
		t.Error("a carrier that does not take was handed a task")
	}
	if !slices.Equal(p.got, []any{"a"}) {
		t.Fatalf("after carry the actor saw %v, want [a]", p.got)
	}
	m.PostUserMessage(&probeMsg{v: "b"})
	if p.runScheduled() != 1 || !slices.Equal(p.got, []any{"a", "b"}) {
		t.Fatalf("a plain message: actor saw %v, want it scheduled and run", p.got)
	}
}

// Started, which Spawn posts, waits for the message that follows it, and
// is read before it; other system messages are scheduled and read before
// user messages.
func TestMailboxStartedWaitsForTheFirstMessage(t *testing.T) {
	m, p := newProbedBox(t)
	m.PostSystemMessage(&actor.Started{})
	if len(p.scheduled) != 0 {
		t.Fatal("Started was scheduled on its own")
	}
	m.PostUserMessage(carry("cmd"))
	m.carry(false)
	if len(p.got) != 2 || p.got[1] != "cmd" {
		t.Fatalf("actor saw %v, want Started then cmd", p.got)
	}
	if _, ok := p.got[0].(*actor.Started); !ok {
		t.Fatalf("actor saw %v first, want Started", p.got[0])
	}
	m.PostSystemMessage(&actor.SuspendMailbox{})
	m.PostUserMessage("held")
	p.runScheduled()
	if len(p.got) != 2 {
		t.Fatalf("a suspended mailbox ran %v", p.got[2:])
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	p.runScheduled()
	if len(p.got) != 3 || p.got[2] != "held" {
		t.Fatalf("after resume the actor saw %v, want held last", p.got)
	}
}

// A carrier reads at most carryBudget messages, then hands the rest to the
// dispatcher; the order is kept.
func TestMailboxCarrierHandsOverAfterItsBudget(t *testing.T) {
	m, p := newProbedBox(t)
	n := carryBudget + 10
	for i := range n {
		m.PostUserMessage(carry(i))
	}
	m.carry(false)
	if len(p.got) != carryBudget || len(p.scheduled) != 1 {
		t.Fatalf("carrier read %d messages and scheduled %d runs, want %d and 1", len(p.got), len(p.scheduled), carryBudget)
	}
	p.runScheduled()
	for i, v := range p.got {
		if v != i {
			t.Fatalf("message %d read as %v: order lost", i, v)
		}
	}
	if len(p.got) != n {
		t.Fatalf("read %d of %d messages", len(p.got), n)
	}
}

// A taking carrier gets the first task the actor starts while it runs the
// mailbox; a second one, or one started under a carrier that does not
// take, is refused (the actor starts a goroutine for it).
func TestMailboxTakingCarrierGetsTheFirstTask(t *testing.T) {
	m, p := newProbedBox(t)
	var offered []bool
	p.onInvoke = func(any) {
		offered = append(offered, m.offer(func(*runner) carried { return carry("x") }), m.offer(func(*runner) carried { return carry("y") }))
	}
	m.PostUserMessage(carry("reply"))
	next := m.carry(true)
	if next == nil || next(nil).(*probeMsg).v != "x" || !slices.Equal(offered, []bool{true, false}) {
		t.Fatalf("taking carrier: task %v, offers %v; want the first task, offers [true false]", next, offered)
	}
	offered = nil
	m.PostUserMessage(carry("again"))
	if next := m.carry(false); next != nil || !slices.Equal(offered, []bool{false, false}) {
		t.Fatalf("carrier that does not take: task %v, offers %v", next, offered)
	}
}

// Goroutines that post and carry at once: every message is read once, by
// one goroutine at a time (the probe fails the test otherwise), none is
// left in the mailbox.
func TestMailboxConcurrentCarriers(t *testing.T) {
	m, p := newProbedBox(t)
	const senders, each = 8, 500
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i%3 == 0 {
					m.PostUserMessage(s*each + i) // scheduled
					continue
				}
				m.PostUserMessage(carry(s*each + i))
				m.carry(i%2 == 0)
			}
		}()
	}
	wg.Wait()
	for p.runScheduled() > 0 {
	}
	seen := map[any]bool{}
	for _, v := range p.got {
		if seen[v] {
			t.Fatalf("message %v read twice", v)
		}
		seen[v] = true
	}
	if len(seen) != senders*each || m.UserMessageCount() != 0 {
		t.Fatalf("read %d of %d messages, %d left", len(seen), senders*each, m.UserMessageCount())
	}
}
