package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/bus/bustest"
)

// TestSendResumeRetrying: refusals that guarantee nothing was recorded
// (session_owned, unavailable) are retried until a node accepts; any other
// refusal is returned at once.
func TestSendResumeRetrying(t *testing.T) {
	_, nc := bustest.Server(t)

	tests := []struct {
		name    string
		refuse  []string // the codes of the first replies; then success
		want    error    // nil: accepted
		answers int32    // requests the node answered
	}{
		{"owner moving, then accepted", []string{"session_owned", "unavailable"}, nil, 3},
		{"accepted at once", nil, nil, 1},
		{"a refusal that is final", []string{"duplicate_decision"}, actors.ErrDuplicateDecision, 1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			session := "s" + string(rune('a'+i))
			subject, err := bus.Default.Command(session, actors.VerbResume)
			if err != nil {
				t.Fatal(err)
			}
			var n atomic.Int32
			sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
				k := int(n.Add(1)) - 1
				reply := actors.CommandReply{RunID: "r1", Version: 9}
				if k < len(tc.refuse) {
					reply = actors.CommandReply{Error: &actors.CommandError{Verb: "resume", SessionID: session, Code: tc.refuse[k], Message: "test"}}
				}
				b, _ := json.Marshal(reply)
				_ = m.Respond(b)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			reply, err := sendResumeRetrying(t.Context(), nc, session, actors.ResumeCommand{RunID: "r1"})
			switch {
			case tc.want == nil && (err != nil || reply.Version != 9):
				t.Errorf("sendResumeRetrying = %+v, %v; want the accepting reply", reply, err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("sendResumeRetrying error = %v, want %v", err, tc.want)
			}
			if got := n.Load(); got != tc.answers {
				t.Errorf("the node answered %d requests, want %d", got, tc.answers)
			}
		})
	}
}

// TestSendResumeRetryingUntilContextEnds: when ctx ends while the node
// still refuses with session_owned, the last refusal is returned, not the
// context's error.
func TestSendResumeRetryingUntilContextEnds(t *testing.T) {
	_, nc := bustest.Server(t)
	subject, err := bus.Default.Command("s1", actors.VerbResume)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		n.Add(1)
		b, _ := json.Marshal(actors.CommandReply{Error: &actors.CommandError{Verb: "resume", SessionID: "s1", Code: "session_owned", Message: "test"}})
		_ = m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithTimeout(t.Context(), 250*time.Millisecond)
	defer cancel()
	_, err = sendResumeRetrying(ctx, nc, "s1", actors.ResumeCommand{RunID: "r1"})
	if !errors.Is(err, actors.ErrSessionOwned) || n.Load() < 2 {
		t.Errorf("sendResumeRetrying error = %v after %d requests; want the session_owned refusal after at least 2", err, n.Load())
	}
}
