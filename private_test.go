package weft_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// privateSecret marks the private values a tool leaves in this test.
const privateSecret = "SECRET-bearer-9f8e7d"

// tokenError is an error whose Go type only private surfaces record.
type tokenError struct{}

func (*tokenError) Error() string { return "refused" }

// leaks reports whether data holds a private value of this test: the
// secret, a panic's stack, the Go type of the captured error.
func leaks(data []byte) bool {
	for _, s := range []string{privateSecret, "runtime/debug.Stack", "tokenError"} {
		if strings.Contains(string(data), s) {
			return true
		}
	}
	return false
}

// TestLiveEventsRedactPrivateSurfaces: a subscriber to the event subjects
// (weft.evt.>) never receives a tool's private metadata, a panic's stack or
// a captured error: the live copies say what was redacted, and the log
// keeps the whole events, chained — on the memory store (the host
// publishes) and on JetStream (the store stores through the log's ingest
// subjects, the host publishes the live copies).
func TestLiveEventsRedactPrivateSurfaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) weft.Config
	}{
		{"memstore", func(*testing.T) weft.Config { return weft.Config{Store: memstore.New()} }},
		{"jetstream", func(t *testing.T) weft.Config { return weft.Config{DataDir: t.TempDir()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := weft.Start(t.Context(), tc.cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close() })
			tries := 0
			leaky := tool(t, "leaky", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
				if tries++; tries == 1 {
					return nil, errors.New("dial with token " + privateSecret)
				}
				return toolsets.Result{Content: "ok", PrivateMetadata: map[string]any{"trace": privateSecret}}, nil
			}, toolsets.WithMaxRetries(1))
			boom := tool(t, "boom", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
				panic("boom")
			}, toolsets.WithMaxRetries(0))
			failing := tool(t, "failing", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
				return nil, &tokenError{}
			}, toolsets.WithMaxRetries(0))
			model := llm.NewScripted(llm.ScriptToolCalls(call("a", "leaky", `{}`), call("b", "boom", `{}`), call("c", "failing", `{}`)), llm.ScriptText("done"))
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{leaky, boom, failing}}).NewSession()

			filter, err := rt.Subjects().StreamEvents(events.SessionStream(sess.ID()))
			if err != nil {
				t.Fatal(err)
			}
			ch := make(chan *nats.Msg, 256)
			sub, err := rt.Conn().ChanSubscribe(filter, ch)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sub.Unsubscribe() }()
			if err := rt.Conn().Flush(); err != nil {
				t.Fatal(err)
			}
			res, err := sess.Run(t.Context(), "go")
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Run = %+v, %v", res, err)
			}

			stored := streamEvents(t, rt, sess.ID())
			if cerr := events.VerifyChain(stored); cerr != nil {
				t.Fatalf("stored chain: %v", cerr)
			}
			storedPrivate := 0
			for _, ev := range stored {
				if leaks(ev.Data) {
					storedPrivate++
				}
			}
			if storedPrivate != 4 { // the retried attempt and three returns
				t.Errorf("the log holds %d events with private values, want 4 (kept whole)", storedPrivate)
			}

			// Every stored event arrives live, once, the last one
			// included; none carries a private value.
			redacted := map[string][]string{}
			deadline := time.After(10 * time.Second)
			for seen := 0; seen < len(stored); seen++ {
				var m *nats.Msg
				select {
				case m = <-ch:
				case <-deadline:
					t.Fatalf("%d of %d events arrived live", seen, len(stored))
				}
				if leaks(m.Data) {
					t.Errorf("live %s leaks a private value: %s", m.Subject, m.Data)
				}
				ev, err := events.ParseEvent(m.Data)
				if err != nil {
					t.Fatalf("live %s: %v", m.Subject, err)
				}
				if _, err := events.Decode(ev); err != nil {
					t.Errorf("live %s does not decode: %v", ev.Type, err)
				}
				if len(ev.Redacted) > 0 {
					redacted[string(ev.Type)+" "+ev.ToolCallID] = ev.Redacted
				}
			}
			for key, want := range map[string][]string{
				"tool.retried a":  {"error.message", "error.type"},
				"tool.returned a": {"return.private_metadata"},
				"tool.returned b": {"return.private_metadata", "error"},
				"tool.returned c": {"return.private_metadata", "error"},
			} {
				if got := redacted[key]; !slices.Equal(got, want) {
					t.Errorf("%s: redacted %q, want %q", key, got, want)
				}
			}
		})
	}
}
