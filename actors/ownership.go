package actors

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// leaseTimeout bounds one lease operation of the host.
const leaseTimeout = 5 * time.Second

// ownership is the host's side of the session leases (HostConfig.Leases).
type ownership struct {
	// ctx is the renewal loop's lifetime, cancelled by stopOwnership: it
	// ends the loop and a renewal in flight, and WatchLeases with them.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the renewal loop has ended
}

// startOwnership subscribes to the commands forwarded to this node and
// starts renewing the leases this node holds every TTL/3.
func (h *Host) startOwnership() (*nats.Subscription, error) {
	l := h.cfg.Leases
	filter, err := h.subj.NodeCommands(l.Node())
	if err != nil {
		return nil, err
	}
	sub, err := h.cfg.Conn.Subscribe(filter, h.onNodeCommand)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.own = &ownership{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go h.renewLoop(h.own)
	return sub, nil
}

// renewLoop renews the held leases every TTL/3 until o.ctx ends. A
// session whose lease another node took is stood down.
func (h *Host) renewLoop(o *ownership) {
	defer close(o.done)
	l := h.cfg.Leases
	t := time.NewTicker(l.TTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-o.ctx.Done():
			return
		case <-t.C:
		}
		if !renewHeld(o.ctx, l, h.log, func(id string) { h.standDown(id, nil) }) {
			return
		}
	}
}

// leased routes a command received on the cluster's command subject: it
// returns true when this node holds (or has just taken) the session's
// lease and acts on the command; otherwise it has answered the command,
// or handed it to forward.
func (h *Host) leased(m *nats.Msg, id, verb string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
	defer cancel()
	owner, err := h.cfg.Leases.Acquire(ctx, id)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, leaseSentinel(err), "%v", err)})
		return false
	}
	if owner == h.cfg.Leases.Node() {
		return true
	}
	// The owner's answer may take as long as its session actor's read
	// and append: wait for it off the command subscription.
	h.background(func() { h.forward(m, owner, id, verb) })
	return false
}

// forwardTimeout bounds the wait for the answer of the owner a command was
// forwarded to: its lease check, then its session actor's read and append.
const forwardTimeout = leaseTimeout + 2*storeTimeout

// forward sends a command to owner, the node holding session id's lease,
// on weft.node.<owner>.cmd.session.<id>.<verb> as a request, and relays
// its answer to the caller. When no subscriber has that subject (the
// owner died, or was killed and restarted under another node id, before
// its lease expired) NATS says so at once and the caller is answered
// session_owned: nothing was recorded, and the retried command is taken
// by a live node once the lease has expired (within its TTL). Forwarding
// the caller's reply subject instead would leave the caller waiting for
// its timeout: NATS reports no responders only to the publisher of a
// request, not to a node that republishes it. An owner that does not
// answer within forwardTimeout, or a host that closes meanwhile, answers
// nothing: the owner may have acted, and the caller's timeout ends its
// wait.
func (h *Host) forward(m *nats.Msg, owner, id, verb string) {
	subject, err := h.subj.NodeCommand(owner, id, verb)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrInternal, "forward to %q: %v", owner, err)})
		return
	}
	ctx, cancel := context.WithTimeout(h.life, forwardTimeout)
	defer cancel()
	reply, err := h.cfg.Conn.RequestMsgWithContext(ctx, &nats.Msg{Subject: subject, Data: m.Data, Header: m.Header})
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		respond(m, CommandReply{Error: ownerSilent(verb, id, owner, h.cfg.Leases.TTL())})
	case err != nil:
		h.log.Warn("forward command", "session", id, "verb", verb, "owner", owner, "err", err)
	default:
		_ = m.RespondMsg(&nats.Msg{Data: reply.Data, Header: reply.Header})
	}
}

// ownerSilent is the session_owned error of a command sent to owner, the
// node holding the session's lease, which nobody answers on its subject:
// nothing was recorded, and the retried command is taken by a live node
// once the lease has expired (within ttl).
func ownerSilent(verb, id, owner string, ttl time.Duration) *CommandError {
	return commandError(verb, id, ErrSessionOwned,
		"node %q holds the session's lease but does not answer (it stopped without releasing it): the lease expires within %v, retry", owner, ttl)
}

// leaseSentinel is the command error code of a lease operation's failure:
// ErrUnavailable for a failure of NATS or JetStream that passes by itself
// (a timeout, no responders, a connection down or reconnecting, JetStream
// temporarily unavailable), ErrInternal otherwise.
func leaseSentinel(err error) error {
	if transient(err) {
		return ErrUnavailable
	}
	return ErrInternal
}

// transient reports whether err is a NATS or JetStream failure that passes
// by itself: retrying the operation later may succeed.
func transient(err error) bool {
	for _, t := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders,
		nats.ErrConnectionReconnecting, nats.ErrDisconnected, nats.ErrConnectionDraining,
		jetstream.ErrNoStreamResponse, jetstream.ErrJetStreamNotEnabled, jetstream.ErrJetStreamNotEnabledForAccount} {
		if errors.Is(err, t) {
			return true
		}
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && api.Code == 503
}

// onNodeCommand handles a command another node forwarded to this one: it
// acts on it if this node still owns the session, and answers
// session_owned otherwise (the caller retries).
func (h *Host) onNodeCommand(m *nats.Msg) {
	id, verb, err := h.subj.ParseNodeCommand(h.cfg.Leases.Node(), m.Subject)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrBadCommand, "bad command subject %q: %v", m.Subject, err)})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
	owner, err := h.cfg.Leases.Acquire(ctx, id)
	cancel()
	switch {
	case err != nil:
		respond(m, CommandReply{Error: commandError(verb, id, leaseSentinel(err), "%v", err)})
		return
	case owner != h.cfg.Leases.Node():
		respond(m, CommandReply{Error: commandError(verb, id, ErrSessionOwned, "session is owned by node %q", owner)})
		return
	}
	h.deliver(m, id, verb)
}

// deliver sends a command to session id's actor, spawning it if needed.
func (h *Host) deliver(m *nats.Msg, id, verb string) {
	if err := h.sendCommand(id, &command{verb: verb, data: m.Data, reply: func(r CommandReply) { respond(m, r) }}, false); err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrInternal, "%v", err)})
	}
}

// standDown stops the actor of session id (pid, or whichever it is when
// pid is nil) because another writer drove the session: the next command
// or takeover rebuilds it from the stream.
func (h *Host) standDown(id string, pid *actor.PID) {
	h.mu.Lock()
	var cur *actor.PID
	if ref, ok := h.sessions[id]; ok && (pid == nil || ref.pid.Equal(pid)) {
		delete(h.sessions, id)
		cur = ref.pid
	}
	closed := h.closed
	h.mu.Unlock()
	if cur != nil && !closed {
		h.system.Root.Poison(cur)
	}
	if h.cfg.Leases != nil {
		h.cfg.Leases.Forget(id)
	}
}

// stopOwnership ends the renewal loop; with release, it then releases
// every lease this node holds (a clean stop), so another node may take
// their sessions at once.
//
// A release is a round trip through NATS, which a connection that is
// closed or not connected (its server gone, reconnecting) cannot make: a
// request on it would wait out its whole timeout. The releases are tried
// only while the connection is connected, and share one deadline,
// releaseTimeout; a lease left unreleased (the connection down, or the
// deadline passed) expires TTL after its last renewal, as the lease of a
// node that died does (see "Ownership" in the package doc), and its
// session is taken over then.
func (h *Host) stopOwnership(release bool) {
	if h.own == nil {
		return
	}
	h.own.cancel()
	<-h.own.done
	if !release {
		return
	}
	l := h.cfg.Leases
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for _, id := range l.Held() {
		if !h.cfg.Conn.IsConnected() || ctx.Err() != nil {
			h.log.Warn("lease left to expire", "session", id, "ttl", l.TTL())
			l.Forget(id)
			continue
		}
		if err := l.Release(ctx, id); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			h.log.Warn("release lease", "session", id, "err", err)
		}
	}
}

// releaseTimeout bounds the release of all the leases a closing host
// holds (stopOwnership).
const releaseTimeout = 2 * time.Second
