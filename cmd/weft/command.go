package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/protocol"
)

// sendCommand sends body as a verb command (protocol.VerbStart,
// VerbResume, VerbCancel) on session's command subject and returns the
// node's reply. No node serving is errNoNode; a request the server
// dropped for the connection's permissions is said with roleHint (what
// a role that may send it may do, and the flag: "may cancel: --role
// operator"); a refusal is an error wrapping the reply's
// *protocol.CommandError.
func sendCommand(ctx context.Context, nc *nats.Conn, session, verb string, body any, roleHint string) (protocol.CommandReply, error) {
	var reply protocol.CommandReply
	subject, err := bus.Default.Command(session, verb)
	if err != nil {
		return reply, err
	}
	data, err := json.Marshal(body)
	if err != nil {
		return reply, fmt.Errorf("encode the %s command: %w", verb, err)
	}
	msg, err := nc.RequestWithContext(ctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return reply, fmt.Errorf("%s on %s: %w (is a node serving? weft serve)", verb, subject, errNoNode)
	case err != nil && errors.Is(nc.LastError(), nats.ErrPermissionViolation):
		// The server dropped the request: the connection's role may not
		// send it (it says so asynchronously; the request only times out).
		return reply, fmt.Errorf("%s on %s: %w (connect with a role that %s)", verb, subject, nc.LastError(), roleHint)
	case err != nil:
		return reply, fmt.Errorf("%s on %s: %w", verb, subject, err)
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return reply, fmt.Errorf("%s on %s: the reply %q is not a command reply: %w", verb, subject, msg.Data, err)
	}
	if reply.Error != nil {
		return reply, fmt.Errorf("%s on %s: the node refused it (%s): %w", verb, subject, reply.Error.Code, reply.Error)
	}
	return reply, nil
}
