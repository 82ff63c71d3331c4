package httpapi

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
)

// liveMsg is a live message of a subject: its data and, on an event
// subject, the event parsed once for every stream that receives it.
type liveMsg struct {
	subject string
	data    []byte
	ev      events.Event
	err     error // the data is not an event
}

// fanout shares one NATS subscription per subject among the event streams
// that follow it, so that a hundred clients of one session cost the
// node's connection one copy of each message, not a hundred.
type fanout struct {
	conn *nats.Conn
	mu   sync.Mutex
	hubs map[string]*hub
	// drops counts the messages a client's full buffer missed.
	drops atomic.Int64
}

// hub is the subscription of one subject and its clients.
type hub struct {
	sub     *nats.Subscription
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

func newFanout(conn *nats.Conn) *fanout { return &fanout{conn: conn, hubs: map[string]*hub{}} }

// join delivers the messages of subject to ch from now on (the server has
// registered the subscription when join returns) until leave. A client
// whose channel is full misses the message: its stream finds the gap in
// the versions, or sees missed set, and reads what it missed from the log.
func (f *fanout) join(subject string, ch *liveClient, parse bool) (leave func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hubs[subject]
	if h == nil {
		h = &hub{clients: map[*liveClient]struct{}{}}
		h.sub, err = f.conn.Subscribe(subject, func(m *nats.Msg) {
			lm := &liveMsg{subject: m.Subject, data: m.Data}
			if parse {
				lm.ev, lm.err = events.ParseEvent(m.Data)
			}
			h.mu.RLock()
			defer h.mu.RUnlock()
			for c := range h.clients {
				select {
				case c.ch <- lm:
				default: // the client reads it from the log
					c.missed.Store(true)
					f.drops.Add(1)
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("subscribe to %s: %w", subject, err)
		}
		// Unbounded on this side: the clients' channels bound it.
		_ = h.sub.SetPendingLimits(-1, -1)
		if err := f.conn.Flush(); err != nil {
			_ = h.sub.Unsubscribe()
			return nil, fmt.Errorf("subscribe to %s: %w", subject, err)
		}
		f.hubs[subject] = h
	}
	h.mu.Lock()
	h.clients[ch] = struct{}{}
	h.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		h.mu.Lock()
		delete(h.clients, ch)
		last := len(h.clients) == 0
		h.mu.Unlock()
		if last {
			_ = h.sub.Unsubscribe()
			delete(f.hubs, subject)
		}
	}, nil
}
