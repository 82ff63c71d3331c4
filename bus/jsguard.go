package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The JetStream API answers a request in the account of the connection
// that sent it (the lesser roles' accounts import it as a service), but a
// push consumer delivers, and a stream republishes or sources, in the
// account of the stream: the node account. The API calls whose body names
// such a subject therefore reach the node account through the API guard,
// a service of the node account that forwards a request to the JetStream
// API only when every subject in it is one the role may receive: a
// consumer's deliver subject under the role's own inbox, a pool stream
// with no republish, sources, mirror or subject transform and only the
// pool subjects. Everything else is answered with a JetStream API error.

// guardPrefix is the subject prefix of the API guard in the node account:
// guardPrefix + "<role>.<API subject after $JS.API.>".
const guardPrefix = "$WEFT.GUARD."

// GuardSubject returns the subject of the API guard, in the node account,
// that a JetStream API subject of role r is mapped to (see Imports).
func GuardSubject(r Role, api string) string {
	return guardPrefix + string(r) + "." + strings.TrimPrefix(api, jsAPI)
}

// guardedAPI are the JetStream API calls (after $JS.API.) whose request
// names a subject the server publishes on in the stream's account.
var guardedAPI = []string{"CONSUMER.CREATE.", "CONSUMER.DURABLE.CREATE.", "STREAM.CREATE."}

// guarded reports whether the API subject api goes through the guard.
func guarded(api string) bool {
	rest, ok := strings.CutPrefix(api, jsAPI)
	if !ok {
		return false
	}
	for _, g := range guardedAPI {
		if strings.HasPrefix(rest, g) {
			return true
		}
	}
	return false
}

// ErrGuardRefused is matched (errors.Is) by the refusals of the API guard.
var ErrGuardRefused = errors.New("bus: refused by the JetStream API guard")

// JSGuard is a running API guard (ServeJSGuard).
type JSGuard struct {
	nc       *nats.Conn
	sub      *nats.Subscription
	inflight sync.WaitGroup
	// life bounds the forwarded requests in flight (the guard's own
	// lifetime): Close ends it when their answers cannot arrive.
	life context.Context
	end  context.CancelFunc
}

// guardTimeout bounds a forwarded request's wait for the JetStream API.
const guardTimeout = 10 * time.Second

// JSGuardQueue is the queue group of the API guard: every node may run
// one, and each request reaches one of them.
const JSGuardQueue = "weft-jsguard"

// ServeJSGuard runs the API guard of layout l on nc, a connection of the
// node role (it forwards the requests it accepts to the JetStream API of
// the node account). The embedded server runs one when it has
// Credentials; on an external cluster configured with NATSAccounts, every
// weft serve node runs one. Without a guard, the lesser roles cannot
// create consumers (their requests go unanswered): the guard fails
// closed. Close stops it.
func ServeJSGuard(nc *nats.Conn, l Layout) (*JSGuard, error) {
	g := &JSGuard{nc: nc}
	g.life, g.end = context.WithCancel(context.Background())
	sub, err := nc.QueueSubscribe(guardPrefix+">", JSGuardQueue, func(m *nats.Msg) {
		api, body, err := l.guardDecide(m.Subject, m.Data)
		if err != nil {
			if m.Reply != "" {
				_ = m.Respond(guardRefusal(m.Subject, err))
			}
			return
		}
		// The guard asks the API itself, with the body it checked, and
		// relays its one answer to the request's reply subject (the
		// route back into the requester's account, which a client may
		// not name as its own reply); the requester's headers are not
		// forwarded.
		g.inflight.Add(1)
		go func() {
			defer g.inflight.Done()
			ctx, cancel := context.WithTimeout(g.life, guardTimeout)
			defer cancel()
			ans, err := nc.RequestWithContext(ctx, api, body)
			if err == nil && m.Reply != "" {
				_ = m.Respond(ans.Data)
			}
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("bus: JetStream API guard: %w", err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus: JetStream API guard: %w", err)
	}
	g.sub = sub
	return g, nil
}

// Close stops the guard and waits for the requests it is forwarding to be
// answered and relayed, unless the connection is closed or not connected
// (its server gone, or reconnecting), or leaves that state during the
// wait: no answer can then arrive, and Close abandons them at once rather
// than wait out guardTimeout; their requesters time out and retry.
func (g *JSGuard) Close() error {
	err := g.sub.Unsubscribe()
	// The listener is registered before the connection is checked, so a
	// drop between the check and the end of the wait is not missed.
	status := g.nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CLOSED)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-status:
			g.end()
		case <-stop:
		}
	}()
	if !g.nc.IsConnected() {
		g.end()
	}
	g.inflight.Wait()
	close(stop)
	<-stopped
	g.nc.RemoveStatusListener(status)
	g.end()
	return err
}

// guardDecide returns the JetStream API subject a guard request on subject
// forwards to and the body it forwards, or why it is refused. The body is
// decoded as the server decodes it (its own request types, unknown fields
// refused) and the guard forwards its own encoding of what it checked, so
// that no spelling the two decoders might read differently (a duplicate
// key, a second JSON value) slips past it.
func (l Layout) guardDecide(subject string, data []byte) (string, []byte, error) {
	rest, ok := strings.CutPrefix(subject, guardPrefix)
	if !ok {
		return "", nil, fmt.Errorf("%w: %q is not a guard subject", ErrGuardRefused, subject)
	}
	name, call, _ := strings.Cut(rest, ".")
	r, err := ParseRole(name)
	if err != nil || r == RoleNode {
		return "", nil, fmt.Errorf("%w: no lesser role %q", ErrGuardRefused, name)
	}
	var req any
	switch {
	case strings.HasPrefix(call, "CONSUMER.CREATE.") || strings.HasPrefix(call, "CONSUMER.DURABLE.CREATE."):
		var cr server.CreateConsumerRequest
		if err := decodeOne(data, &cr); err != nil {
			return "", nil, fmt.Errorf("%w: a consumer request: %v", ErrGuardRefused, err)
		}
		if d := cr.Config.DeliverSubject; d != "" && !strings.HasPrefix(d, r.InboxPrefix()+".") {
			return "", nil, fmt.Errorf("%w: the deliver subject %q of a %s consumer is not under its inbox %s.>", ErrGuardRefused, d, r, r.InboxPrefix())
		}
		req = cr
	case call == "STREAM.CREATE."+l.WorkerQueueStream:
		var sc server.StreamConfigRequest
		if err := decodeOne(data, &sc); err != nil {
			return "", nil, fmt.Errorf("%w: a stream configuration: %v", ErrGuardRefused, err)
		}
		if err := l.checkPoolStream(&sc.StreamConfig); err != nil {
			return "", nil, err
		}
		if sc.Storage == 0 {
			sc.Storage = server.FileStorage // the server's default, which has no zero encoding
		}
		req = sc
	default:
		return "", nil, fmt.Errorf("%w: %s may not call %s through the guard", ErrGuardRefused, r, call)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrGuardRefused, err)
	}
	return jsAPI + call, body, nil
}

// decodeOne decodes data, exactly one JSON value with no field v lacks.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value")
	}
	return nil
}

// checkPoolStream refuses a configuration of the pool stream that takes
// other subjects than the pool's or makes the server publish or read
// elsewhere (republish, sources, mirror, subject transform).
func (l Layout) checkPoolStream(cfg *server.StreamConfig) error {
	switch {
	case cfg.RePublish != nil:
		return fmt.Errorf("%w: the pool stream may not republish", ErrGuardRefused)
	case len(cfg.Sources) > 0:
		return fmt.Errorf("%w: the pool stream may not have sources", ErrGuardRefused)
	case cfg.Mirror != nil:
		return fmt.Errorf("%w: the pool stream may not mirror", ErrGuardRefused)
	case cfg.SubjectTransform != nil:
		return fmt.Errorf("%w: the pool stream may not transform subjects", ErrGuardRefused)
	case len(cfg.Subjects) == 0:
		return fmt.Errorf("%w: the pool stream needs its subjects", ErrGuardRefused)
	}
	prefix := l.Subjects.Root() + ".worker.queue."
	for _, s := range cfg.Subjects {
		if !strings.HasPrefix(s, prefix) || len(s) == len(prefix) {
			return fmt.Errorf("%w: the pool stream may not take %q (only %s>)", ErrGuardRefused, s, prefix)
		}
	}
	return nil
}

// guardRefusal is the JetStream API error answer of a refused request.
func guardRefusal(subject string, err error) []byte {
	typ := "io.nats.jetstream.api.v1.consumer_create_response"
	if strings.Contains(subject, ".STREAM.CREATE.") {
		typ = "io.nats.jetstream.api.v1.stream_create_response"
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "error": map[string]any{"code": 403, "description": err.Error()}})
	return b
}
