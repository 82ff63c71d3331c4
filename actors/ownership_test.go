package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events/memstore"
)

// A command for a session leased by another node is forwarded to that
// node, and the caller always hears back: the owner's answer, relayed; or,
// when no process serves the owner's node subject (it was killed before
// its lease expired), session_owned at once, naming the owner, so that the
// caller retries instead of waiting for its timeout.
func TestForwardToOwner(t *testing.T) {
	const session = "leased-elsewhere"
	resume, _ := json.Marshal(ResumeCommand{RunID: "r1", Decisions: []Decision{{ID: "c1", Action: ActionApprove, By: "ops"}}})
	tests := []struct {
		name string
		// owner serves node-a's forwarded commands (or not: nil).
		owner   func(m *nats.Msg)
		want    CommandReply
		wantErr error
	}{
		{
			name: "owner answers",
			owner: func(m *nats.Msg) {
				if string(m.Data) != string(resume) {
					respond(m, CommandReply{Error: commandError(VerbResume, session, ErrBadCommand, "forwarded %s", m.Data)})
					return
				}
				respond(m, CommandReply{RunID: "r1", Version: 7})
			},
			want: CommandReply{RunID: "r1", Version: 7},
		},
		{name: "owner gone", wantErr: ErrSessionOwned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := testNATS(t)
			// node-a holds the lease, a TTL longer than the test: only
			// node-a could act on the session.
			const ttl = 5 * time.Minute
			if got := acquire(t, newTestLeases(t, conn(), "node-a", ttl), session); got != "node-a" {
				t.Fatalf("node-a acquires: owner %q", got)
			}
			if tc.owner != nil {
				nc := conn()
				filter, err := bus.Default.NodeCommands("node-a")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := nc.Subscribe(filter, tc.owner); err != nil {
					t.Fatal(err)
				}
				if err := nc.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			newTakeoverNode(t, conn, memstore.New(), "node-b", nodeOptions{ttl: ttl, markers: true})

			// The caller's wait is bounded by the test, not asserted.
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
			defer cancel()
			got, err := commandRequest(ctx, conn(), session, VerbResume, resume)
			if err != nil {
				t.Fatalf("resume: %v (the caller heard nothing)", err)
			}
			if tc.wantErr != nil {
				if got.Error == nil || !errors.Is(got.Error, tc.wantErr) || !strings.Contains(got.Error.Error(), `"node-a"`) {
					t.Fatalf("reply error = %v, want %v naming node-a", got.Error, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

// commandRequest sends a command on the cluster's command subject from a
// caller's connection and decodes the reply.
func commandRequest(ctx context.Context, nc *nats.Conn, session, verb string, body []byte) (CommandReply, error) {
	var reply CommandReply
	subject, err := bus.Default.Command(session, verb)
	if err != nil {
		return reply, err
	}
	msg, err := nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		return reply, err
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return reply, err
	}
	return reply, nil
}
