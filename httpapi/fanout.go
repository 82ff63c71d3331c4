package httpapi

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
)

// liveMsg is a live message of a feed: its data and, from the feed's
// event subject, the event parsed once for every stream that receives it.
type liveMsg struct {
	delta bool // from the feed's delta subject: live model output
	data  []byte
	ev    events.Event
	err   error // the data is not an event
}

// feed names what a stream follows: an event subject filter and, or, the
// subject of live model output. A node publishes both from one
// connection in order (a run's last deltas before its run.completed); a
// feed delivers them in that order.
type feed struct {
	events string // an event subject filter ("" for none): its messages are parsed
	deltas string // a delta subject ("" for none)
}

// hubQueue is how many messages a hub holds between the connection and
// its clients; past it NATS drops them (the hub tells its clients, which
// read the log).
const hubQueue = 8192

// fanout shares one delivery per feed among the event streams that follow
// it, so that a hundred clients of one session cost the node's
// connection one copy of each message, not a hundred.
type fanout struct {
	conn *nats.Conn
	mu   sync.Mutex
	hubs map[feed]*hub
	// drops counts the messages a client's full buffer (or a full hub)
	// missed.
	drops atomic.Int64
}

// hub is the delivery of one feed: the handler of its one subscription,
// or, for two, one goroutine reading the channel both put their messages
// on (in the order the connection reads them, the order one publisher
// sent them in), hands each message to the clients.
type hub struct {
	subs    []*nats.Subscription
	evSub   *nats.Subscription // the subscription of feed.events, nil without
	in      chan *nats.Msg     // the channel of two subscriptions; nil for one
	stop    chan struct{}
	mu      sync.RWMutex
	clients map[*liveClient]struct{}
}

// liveClient is a stream's end of a hub: its buffer, and whether it has
// missed a message because the buffer was full.
type liveClient struct {
	ch     chan *liveMsg
	missed atomic.Bool
}

func newLiveClient(size int) *liveClient { return &liveClient{ch: make(chan *liveMsg, size)} }

func newFanout(conn *nats.Conn) *fanout { return &fanout{conn: conn, hubs: map[feed]*hub{}} }

// join delivers the messages of fd to c from now on (the server has
// registered the subscriptions when join returns), in one order, until
// leave. A client whose channel is full misses the message: its stream
// finds the gap in the versions, or sees missed set, and reads what it
// missed from the log.
func (f *fanout) join(fd feed, c *liveClient) (leave func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hubs[fd]
	if h == nil {
		if h, err = f.start(fd); err != nil {
			return nil, err
		}
		f.hubs[fd] = h
	}
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		h.mu.Lock()
		delete(h.clients, c)
		last := len(h.clients) == 0
		h.mu.Unlock()
		if last {
			h.close()
			delete(f.hubs, fd)
		}
	}, nil
}

// start subscribes to fd's subjects and starts the hub's delivery. One
// subject is one subscription whose handler delivers; two go onto one
// channel that one goroutine delivers from, so that they keep the order
// the connection read them in (two handlers would race each other).
func (f *fanout) start(fd feed) (*hub, error) {
	h := &hub{stop: make(chan struct{}), clients: map[*liveClient]struct{}{}}
	var subjects []string
	for _, s := range []string{fd.events, fd.deltas} {
		if s != "" {
			subjects = append(subjects, s)
		}
	}
	if len(subjects) > 1 {
		h.in = make(chan *nats.Msg, hubQueue)
	}
	for _, subject := range subjects {
		var sub *nats.Subscription
		var err error
		if h.in != nil {
			sub, err = f.conn.ChanSubscribe(subject, h.in)
		} else {
			sub, err = f.conn.Subscribe(subject, func(m *nats.Msg) { h.deliver(m, false, &f.drops) })
			if err == nil {
				// Unbounded on this side: the clients' channels bound it.
				_ = sub.SetPendingLimits(-1, -1)
			}
		}
		if err != nil {
			h.close()
			return nil, fmt.Errorf("subscribe to %s: %w", subject, err)
		}
		h.subs = append(h.subs, sub)
		if subject == fd.events {
			h.evSub = sub
		}
	}
	if err := f.conn.Flush(); err != nil {
		h.close()
		return nil, fmt.Errorf("subscribe to %v: %w", fd, err)
	}
	if h.in != nil {
		go h.loop(&f.drops)
	}
	return h, nil
}

// loop delivers the messages of the hub's channel until close. A message
// NATS dropped because the channel was full is reported to every client
// as missed.
func (h *hub) loop(drops *atomic.Int64) {
	dropped := make([]int, len(h.subs))
	for {
		var m *nats.Msg
		select {
		case <-h.stop:
			return
		case m = <-h.in:
		}
		hubMissed := false
		for i, s := range h.subs {
			if n, err := s.Dropped(); err == nil && n > dropped[i] {
				dropped[i], hubMissed = n, true
			}
		}
		h.deliver(m, hubMissed, drops)
	}
}

// deliver hands m to every client that has room for it (marking the
// others, and all of them when missed, as having missed one).
func (h *hub) deliver(m *nats.Msg, missed bool, drops *atomic.Int64) {
	lm := &liveMsg{data: m.Data, delta: m.Sub != h.evSub}
	if !lm.delta {
		lm.ev, lm.err = events.ParseEvent(m.Data)
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for c := range h.clients {
		if missed {
			c.missed.Store(true)
		}
		select {
		case c.ch <- lm:
		default: // the client reads it from the log
			c.missed.Store(true)
			drops.Add(1)
		}
	}
}

// close ends the hub's subscriptions and its delivery.
func (h *hub) close() {
	for _, s := range h.subs {
		_ = s.Unsubscribe()
	}
	close(h.stop)
}
