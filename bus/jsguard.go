package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

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
	sub      *nats.Subscription
	inflight sync.WaitGroup
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
	g := &JSGuard{}
	sub, err := nc.QueueSubscribe(guardPrefix+">", JSGuardQueue, func(m *nats.Msg) {
		api, err := l.guardDecide(m.Subject, m.Data)
		if err != nil {
			if m.Reply != "" {
				_ = m.Respond(guardRefusal(m.Subject, err))
			}
			return
		}
		// The guard asks the API itself and relays its one answer to the
		// request's reply subject (the route back into the requester's
		// account, which a client may not name as its own reply); the
		// requester's headers are not forwarded.
		g.inflight.Add(1)
		go func() {
			defer g.inflight.Done()
			ans, err := nc.Request(api, m.Data, guardTimeout)
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

// Close stops the guard and waits for the requests it is forwarding.
func (g *JSGuard) Close() error {
	err := g.sub.Unsubscribe()
	g.inflight.Wait()
	return err
}

// guardDecide returns the JetStream API subject a guard request on subject
// forwards to, or why it is refused.
func (l Layout) guardDecide(subject string, data []byte) (string, error) {
	rest, ok := strings.CutPrefix(subject, guardPrefix)
	if !ok {
		return "", fmt.Errorf("%w: %q is not a guard subject", ErrGuardRefused, subject)
	}
	name, call, _ := strings.Cut(rest, ".")
	r, err := ParseRole(name)
	if err != nil || r == RoleNode {
		return "", fmt.Errorf("%w: no lesser role %q", ErrGuardRefused, name)
	}
	switch {
	case strings.HasPrefix(call, "CONSUMER.CREATE.") || strings.HasPrefix(call, "CONSUMER.DURABLE.CREATE."):
		var req struct {
			Config struct {
				DeliverSubject string `json:"deliver_subject"`
			} `json:"config"`
		}
		if err := json.Unmarshal(data, &req); err != nil {
			return "", fmt.Errorf("%w: a consumer request that is not JSON: %v", ErrGuardRefused, err)
		}
		if d := req.Config.DeliverSubject; d != "" && !strings.HasPrefix(d, r.InboxPrefix()+".") {
			return "", fmt.Errorf("%w: the deliver subject %q of a %s consumer is not under its inbox %s.>", ErrGuardRefused, d, r, r.InboxPrefix())
		}
	case call == "STREAM.CREATE."+l.WorkerQueueStream:
		if err := l.checkPoolStream(data); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("%w: %s may not call %s through the guard", ErrGuardRefused, r, call)
	}
	return jsAPI + call, nil
}

// checkPoolStream refuses a configuration of the pool stream that takes
// other subjects than the pool's or makes the server publish or read
// elsewhere (republish, sources, mirror, subject transform).
func (l Layout) checkPoolStream(data []byte) error {
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("%w: a stream configuration that is not JSON: %v", ErrGuardRefused, err)
	}
	for _, k := range []string{"republish", "sources", "mirror", "subject_transform"} {
		if v, ok := cfg[k]; ok && string(v) != "null" {
			return fmt.Errorf("%w: the pool stream may not have %s", ErrGuardRefused, k)
		}
	}
	var subjects []string
	if err := json.Unmarshal(cfg["subjects"], &subjects); err != nil || len(subjects) == 0 {
		return fmt.Errorf("%w: the pool stream needs its subjects", ErrGuardRefused)
	}
	prefix := l.Subjects.Root() + ".worker.queue."
	for _, s := range subjects {
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
