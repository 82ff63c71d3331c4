package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
)

// command is a command for a session actor: from this process, its typed
// body (a StartCommand, ResumeCommand or CancelCommand value); from NATS,
// its JSON data. reply answers the caller (nil: nobody waits); replyTo is
// the channel of a caller in this process, which takes the first answer.
type command struct {
	session string
	verb    string
	body    any
	data    []byte
	reply   func(CommandReply)
	replyTo chan CommandReply
	// held: a resume that waited once for its run's tools to be prepared
	// (see core.hold); it is not held again.
	held bool
	// answered: it was answered (answer sends only the first answer).
	answered bool
}

// answer replies to the command's caller, if one waits, unless the
// command was answered already: the first answer wins.
func (c *command) answer(r CommandReply) {
	if c.answered {
		return
	}
	c.answered = true
	if c.replyTo != nil {
		c.replyTo <- r // its buffer holds the one answer
	}
	if c.reply != nil {
		c.reply(r)
	}
}

// commandBody returns the command's body as a T: its typed body (a T or
// a *T) when it came from this process, its JSON data decoded otherwise.
func commandBody[T any](c *command) (T, error) {
	var b T
	switch v := c.body.(type) {
	case T:
		return v, nil
	case *T:
		if v != nil {
			return *v, nil
		}
	case nil:
		err := json.Unmarshal(c.data, &b)
		return b, err
	}
	return b, fmt.Errorf("a %s command cannot carry a %T", c.verb, c.body)
}

// Command sends a command to a session actor and returns its reply. A
// session this node drives (every session without HostConfig.Leases; one
// whose lease this node holds or takes, with them) gets it as a Go value,
// straight into its actor's mailbox; any other goes over NATS to the node
// that holds its lease (request/reply on
// weft.node.<owner>.cmd.session.<id>.<verb>). Both answer the same; a refused command returns its
// *CommandError.
func (h *Host) Command(ctx context.Context, sessionID, verb string, body any) (CommandReply, error) {
	return h.command(ctx, sessionID, verb, body, false)
}

// StartNew is Command of the first start of a session whose id the caller
// made just now from fresh random bits (weft's Agent.NewSession): the
// session has no events, so the actor this process spawns for it does not
// read its stream first, and a store that can (events.NewStreamer) makes
// its first append without reading the stream's head either — on the
// JetStream store, two round trips fewer for a new session's run. A wrong
// claim is refused by the store's expected-version fence at the first
// append (the actor stands down, as for another writer, and the caller's
// retry reads the stream): it cannot fork the stream.
func (h *Host) StartNew(ctx context.Context, sessionID string, cmd StartCommand) (CommandReply, error) {
	return h.command(ctx, sessionID, VerbStart, cmd, true)
}

// command is Command; newSession: see StartNew.
func (h *Host) command(ctx context.Context, sessionID, verb string, body any, newSession bool) (CommandReply, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return CommandReply{}, ErrHostClosed
	}
	// The command's subject checks the session id and verb, wherever the
	// command goes.
	if _, err := h.subj.Command(sessionID, verb); err != nil {
		return CommandReply{}, fmt.Errorf("%w: %v", ErrBadCommand, err)
	}
	owner, err := h.driver(ctx, sessionID)
	if err != nil {
		return CommandReply{}, commandError(verb, sessionID, leaseSentinel(err), "%v", err)
	}
	if owner == "" {
		return h.commandLocal(ctx, sessionID, verb, body, newSession)
	}
	// Another node holds the lease: the command goes straight to it (the
	// node it would be forwarded to from the command subject).
	subject, err := h.subj.NodeCommand(owner, sessionID, verb)
	if err != nil {
		return CommandReply{}, commandError(verb, sessionID, ErrInternal, "send to %q: %v", owner, err)
	}
	data, err := json.Marshal(body)
	if err != nil {
		return CommandReply{}, fmt.Errorf("%w: encode %s: %v", ErrBadCommand, verb, err)
	}
	msg, err := h.cfg.Conn.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		ce := ownerSilent(verb, sessionID, owner, h.cfg.Leases.TTL())
		return CommandReply{Error: ce}, ce
	}
	if err != nil {
		return CommandReply{}, fmt.Errorf("%s session %q: %w", verb, sessionID, err)
	}
	var reply CommandReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return CommandReply{}, fmt.Errorf("%s session %q: decode reply: %w", verb, sessionID, err)
	}
	if reply.Error != nil {
		return reply, reply.Error
	}
	return reply, nil
}

// driver returns the node that drives session id, "" when it is this
// one: always without leases (one node); with them, this node when it
// holds or has just taken the session's lease, the holder otherwise.
func (h *Host) driver(ctx context.Context, id string) (string, error) {
	if h.cfg.Leases == nil {
		return "", nil
	}
	lctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	owner, err := h.cfg.Leases.Acquire(lctx, id)
	if err != nil || owner == h.cfg.Leases.Node() {
		return "", err
	}
	return owner, nil
}

// commandLocal hands a command to the actor of session id in this
// process and waits for its answer, ctx's end or the host's close;
// newSession: see StartNew.
func (h *Host) commandLocal(ctx context.Context, id, verb string, body any, newSession bool) (CommandReply, error) {
	ch := make(chan CommandReply, 1)
	cmd := &command{verb: verb, body: body, replyTo: ch}
	if err := h.sendCommand(id, cmd, newSession); err != nil {
		return CommandReply{}, commandError(verb, id, ErrInternal, "%v", err)
	}
	select {
	case reply := <-ch:
		if reply.Error != nil {
			return reply, reply.Error
		}
		return reply, nil
	case <-ctx.Done():
		return CommandReply{}, fmt.Errorf("%s session %q: %w", verb, id, ctx.Err())
	case <-h.done:
		return CommandReply{}, ErrHostClosed
	}
}

// sendCommand puts cmd into the mailbox of session id's actor, spawning
// (and so rebuilding) the actor when the session has none in this process.
// A command is not carried (see carried): its caller must stay free to
// leave at its context's end. newSession: see StartNew.
func (h *Host) sendCommand(id string, cmd *command, newSession bool) error {
	cmd.session = id
	h.mu.Lock()
	defer h.mu.Unlock()
	// Under the lock passivation takes: a command sent to an actor is in
	// its mailbox before the actor can decide to stop.
	ref, err := h.sessionLocked(id, newSession)
	if err != nil {
		return err
	}
	h.system.Root.Send(ref.pid, cmd)
	return nil
}

// onDeadLetter answers a command that reached an actor after it stopped
// (stood down, or the host closing): unavailable, nothing recorded; the
// caller retries and reaches the session's actor of now.
func (h *Host) onDeadLetter(evt any) {
	dl, ok := evt.(*actor.DeadLetterEvent)
	if !ok {
		return
	}
	if cmd, ok := dl.Message.(*command); ok {
		cmd.answer(CommandReply{Error: commandError(cmd.verb, cmd.session, ErrUnavailable, "the session's actor stopped before it read the command; retry")})
	}
}
