package weft_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	goleak.VerifyTestMain(m,
		// nats.go's object store Put makes a JetStream context per call and
		// cleans it up on return; when the cleanup wins the race with the
		// goroutine it started, that goroutine waits on a nil channel for
		// good (nats.go v1.55.0, jetstream/object.go:693 with publish.go:451).
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.(*ActorSystem).Shutdown"),
		goleak.IgnoreAnyFunction("github.com/lmittmann/tint.(*handler).Handle"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewActorSystemWithConfig.func1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.(*DeadLetterProcess).init.func2"),
		// protoactor starts a dead-letter throttle goroutine it never stops.
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	)
}

// newRuntime starts a runtime on memstore (embedded NATS for messaging).
func newRuntime(t *testing.T) *weft.Runtime {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// startOn starts a runtime on store (which outlives it).
func startOn(t *testing.T, store events.Store) *weft.Runtime {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// newAgent registers an agent named after the test (newAgentNamed).
func newAgent(t *testing.T, rt *weft.Runtime, cfg weft.AgentConfig) *weft.Agent {
	t.Helper()
	return newAgentNamed(t, rt, t.Name(), cfg)
}

type noArgs struct{}

// counter records the concurrency and order of calls.
type counter struct {
	mu      sync.Mutex
	cur     int
	max     int
	order   []string
	entered atomic.Int32
}

func (c *counter) enter(name string) {
	c.mu.Lock()
	c.cur++
	c.max = max(c.max, c.cur)
	c.order = append(c.order, name)
	c.mu.Unlock()
	c.entered.Add(1)
}

func (c *counter) leave() {
	c.mu.Lock()
	c.cur--
	c.mu.Unlock()
}

// tool builds a tool named name from fn, failing the test on error.
func tool(t *testing.T, name string, fn func(context.Context, *toolsets.ToolContext, noArgs) (any, error), opts ...toolsets.Option) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewContextFunc(name, fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// streamEvents returns the events of the session's stream.
func streamEvents(t *testing.T, rt *weft.Runtime, session string) []events.Event {
	t.Helper()
	evs, err := rt.Store().ReadStream(t.Context(), events.SessionStream(session), 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func types(evs []events.Event) []events.Type {
	out := make([]events.Type, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func lastUserMessage(t *testing.T, m *llm.Scripted, req int) llm.Message {
	t.Helper()
	reqs := m.Requests()
	if len(reqs) <= req {
		t.Fatalf("model got %d requests, want more than %d", len(reqs), req)
	}
	msgs := reqs[req].Messages
	return msgs[len(msgs)-1]
}

func returnOf(t *testing.T, ev events.Event) toolsets.Return {
	t.Helper()
	var d events.ToolReturned
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	var r toolsets.Return
	if err := json.Unmarshal(d.Return, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

var _ = weft.StatusCompleted
