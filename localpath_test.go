package weft_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"

	"github.com/weft-run/weft"
)

// A run whose session and tools live in this process puts nothing on
// NATS while nobody listens to its events: its commands reach the session
// actor as Go values, its tool calls run in-process, and the live copy of
// an event nobody subscribes to is not published. Once a subscriber
// listens, it gets every event of the run, in order.
func TestLocalRunUsesNoNATS(t *testing.T) {
	rt := newRuntime(t)
	echo := tool(t, "echo", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "ok", nil })
	model := llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
			r := llm.ScriptText("done")
			return &r, nil
		}
		r := llm.ScriptToolCalls(call("c1", "echo", `{}`))
		return &r, nil
	})
	agent := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{echo}})

	before := rt.Conn().Stats()
	quiet := agent.NewSession()
	if _, err := quiet.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	after := rt.Conn().Stats()
	// Flush's PING is not a message; every publish, request and reply is.
	if n := after.OutMsgs - before.OutMsgs; n != 0 {
		t.Errorf("a local run with no listener published %d NATS messages, want 0", n)
	}

	// A subscriber gets the live copies.
	watched := agent.NewSession()
	sub := rt.Conn()
	filter, err := rt.Subjects().StreamEvents(events.SessionStream(watched.ID()))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *nats.Msg, 64)
	s, err := sub.ChanSubscribe(filter, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe()
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := watched.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	stored := streamEvents(t, rt, watched.ID())
	for i, want := range stored {
		select {
		case m := <-ch:
			var ev events.Event
			if err := json.Unmarshal(m.Data, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Version != want.Version || ev.Type != want.Type {
				t.Fatalf("live event %d = %s v%d, want %s v%d", i, ev.Type, ev.Version, want.Type, want.Version)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("live event %d (%s) never arrived", i, want.Type)
		}
	}
}
