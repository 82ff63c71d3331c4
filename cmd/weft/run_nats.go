package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/protocol"
)

// runKeyNS is the UUIDv5 namespace of the ids weft run derives from an
// --idempotency-key over NATS: the same key names the same session (when
// none is given) and run, so a retried start is refused as a duplicate
// instead of starting a second run.
var runKeyNS = uuid.MustParse("b1f0c5d2-7a3e-5c41-9e8b-2d6f0a4c7e19")

// runOverNATS sends a start command on the session's start subject and
// follows the live copies of the session's events and model output, both
// subscribed (onto one channel, in the order the node published them)
// before the start is sent.
func runOverNATS(ctx context.Context, o runOptions, f *runFollower) error {
	session, runID := o.session, uuid.Must(uuid.NewV7()).String()
	if o.key != "" {
		if session == "" {
			session = uuid.NewSHA1(runKeyNS, []byte(o.key)).String()
		}
		runID = uuid.NewSHA1(runKeyNS, []byte(o.key+"\x00"+session)).String()
	}
	if session == "" {
		session = uuid.Must(uuid.NewV7()).String()
	}
	stream := events.SessionStream(session)
	if err := events.ValidateStream(stream); err != nil {
		return fmt.Errorf("%w: --session %q: %v", errUsage, session, err)
	}
	src, err := openSource(ctx, o.src)
	if err != nil {
		return err
	}
	defer src.Close()
	nc := src.nc
	ch := make(chan *nats.Msg, 4096)
	if o.wait {
		evSubj, err := bus.Default.StreamEvents(stream)
		if err != nil {
			return err
		}
		deltaSubj, err := bus.Default.Delta(stream)
		if err != nil {
			return err
		}
		for _, s := range []string{evSubj, deltaSubj} {
			sub, err := nc.ChanSubscribe(s, ch)
			if err != nil {
				return fmt.Errorf("subscribe to %s: %w", s, err)
			}
			defer func() { _ = sub.Unsubscribe() }()
		}
		if err := nc.FlushWithContext(ctx); err != nil {
			return fmt.Errorf("subscribe to the session's events: %w", err)
		}
	}
	if err := sendStart(ctx, nc, session, protocol.StartCommand{RunID: runID, Agent: o.agent, Prompt: o.prompt}); err != nil {
		return err
	}
	f.res = runResult{SessionID: session, RunID: runID, Status: "running"}
	if !o.wait {
		return nil
	}
	// The log first (a retried start of a run that has settled already
	// publishes nothing more), then the live copies after it.
	evs, err := src.store.ReadStream(ctx, stream, 0)
	if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
		return fmt.Errorf("read session %s: %w", session, err)
	}
	var lastVer uint64
	for _, ev := range evs {
		lastVer = ev.Version
		live, err := events.Redact(ev) // as its live copy is
		if err != nil {
			return fmt.Errorf("redact %s v%d: %w", ev.Stream, ev.Version, err)
		}
		raw, err := events.AppendJSON(nil, &live, true)
		if err != nil {
			return err
		}
		if f.event(live, raw) {
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for run %s of session %s: %w (it goes on: weft show %s)", runID, session, ctx.Err(), session)
		case m := <-ch:
			ev, err := events.ParseEvent(m.Data)
			if err != nil || (!ev.Type.LiveOnly() && ev.Version <= lastVer) {
				continue // not an event, or read from the log already
			}
			if f.event(ev, m.Data) {
				return nil
			}
		}
	}
}

// sendStart sends a start command and waits for the node's reply.
func sendStart(ctx context.Context, nc *nats.Conn, session string, cmd protocol.StartCommand) error {
	subject, err := bus.Default.Command(session, protocol.VerbStart)
	if err != nil {
		return err
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	msg, err := nc.RequestWithContext(ctx, subject, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("start on %s: %w (is a node serving? weft serve)", subject, errNoNode)
	case err != nil && errors.Is(nc.LastError(), nats.ErrPermissionViolation):
		return fmt.Errorf("start on %s: %w (connect with a role that may start runs: --role operator)", subject, nc.LastError())
	case err != nil:
		return fmt.Errorf("start on %s: %w", subject, err)
	}
	var reply protocol.CommandReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return fmt.Errorf("start on %s: the reply %q is not a command reply: %w", subject, msg.Data, err)
	}
	if reply.Error != nil {
		return fmt.Errorf("the node refused the start (%s): %w", reply.Error.Code, reply.Error)
	}
	return nil
}
