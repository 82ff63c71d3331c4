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
	stop chan struct{} // closed by Close: ends the renewal loop
	done chan struct{} // closed when the renewal loop has ended
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
	h.own = &ownership{stop: make(chan struct{}), done: make(chan struct{})}
	go h.renewLoop(h.own)
	return sub, nil
}

// renewLoop renews the held leases until o.stop is closed. A session whose
// lease another node took is stood down.
func (h *Host) renewLoop(o *ownership) {
	defer close(o.done)
	l := h.cfg.Leases
	t := time.NewTicker(l.TTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
		}
		for _, id := range l.Held() {
			ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
			ok, err := l.Renew(ctx, id)
			cancel()
			switch {
			case err != nil:
				h.log.Warn("renew lease", "session", id, "err", err)
			case !ok:
				h.log.Warn("lease lost", "session", id)
				h.standDown(id, nil)
			}
		}
	}
}

// leased routes a command received on the cluster's command subject: it
// returns true when this node holds (or has just taken) the session's
// lease and acts on the command; otherwise it has forwarded the command to
// the owner, or answered it.
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
	// The owner answers the caller directly (same reply subject). An owner
	// that died before its lease expired has no subscriber: the caller
	// gets NATS's no-responders status and retries.
	subject, err := h.subj.NodeCommand(owner, id, verb)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrInternal, "forward to %q: %v", owner, err)})
		return false
	}
	if err := h.cfg.Conn.PublishMsg(&nats.Msg{Subject: subject, Reply: m.Reply, Data: m.Data, Header: m.Header}); err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, leaseSentinel(err), "forward to %q: %v", owner, err)})
	}
	return false
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
	pid, err := h.session(id)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrInternal, "%v", err)})
		return
	}
	h.system.Root.Send(pid, &command{verb: verb, data: m.Data, msg: m})
}

// standDown stops the actor of session id (pid, or whichever it is when
// pid is nil) because another writer drove the session: the next command
// or takeover rebuilds it from the stream.
func (h *Host) standDown(id string, pid *actor.PID) {
	h.mu.Lock()
	cur, ok := h.sessions[id]
	if ok && (pid == nil || cur.Equal(pid)) {
		delete(h.sessions, id)
	} else {
		cur = nil
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
// every lease this node holds (a clean stop).
func (h *Host) stopOwnership(release bool) {
	if h.own == nil {
		return
	}
	close(h.own.stop)
	<-h.own.done
	if !release {
		return
	}
	l := h.cfg.Leases
	for _, id := range l.Held() {
		ctx, cancel := context.WithTimeout(context.Background(), leaseTimeout)
		if err := l.Release(ctx, id); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			h.log.Warn("release lease", "session", id, "err", err)
		}
		cancel()
	}
}
