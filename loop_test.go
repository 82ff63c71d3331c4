package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func TestRunLevelRetry(t *testing.T) {
	type qArgs struct {
		N int `json:"n"`
	}
	tests := []struct {
		name     string
		fn       func(qArgs) (string, error)
		calls    []llm.Response
		wantKind string
		wantRetr []int // Retries of the retry prompts, per request
	}{
		{name: "invalid arguments then success",
			fn:    func(a qArgs) (string, error) { return "ok", nil },
			calls: []llm.Response{llm.ScriptToolCalls(call("1", "q", `{"n":"x"}`)), llm.ScriptToolCalls(call("2", "q", `{"n":1}`)), llm.ScriptText("done")},
		},
		{name: "model retry exceeds budget",
			fn: func(a qArgs) (string, error) { return "", toolsets.ModelRetry("try again") },
			calls: []llm.Response{llm.ScriptToolCalls(call("1", "q", `{"n":1}`)), llm.ScriptToolCalls(call("2", "q", `{"n":1}`)),
				llm.ScriptToolCalls(call("3", "q", `{"n":1}`)), llm.ScriptText("never")},
			wantKind: "tool_retry_limit_exceeded",
		},
		{name: "feedback is not retried",
			fn:    func(a qArgs) (string, error) { return "", toolsets.Feedback("no such file") },
			calls: []llm.Response{llm.ScriptToolCalls(call("1", "q", `{"n":1}`)), llm.ScriptToolCalls(call("2", "q", `{"n":1}`)), llm.ScriptToolCalls(call("3", "q", `{"n":1}`)), llm.ScriptText("done")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			q, err := toolsets.NewFunc("q", func(ctx context.Context, a qArgs) (string, error) { return tt.fn(a) }, toolsets.WithMaxRetries(1))
			if err != nil {
				t.Fatal(err)
			}
			model := llm.NewScripted(tt.calls...)
			res, err := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{q}}).Run(t.Context(), "go")
			if tt.wantKind == "" {
				if err != nil || res.Status != weft.StatusCompleted {
					t.Fatalf("Run = %+v, %v", res, err)
				}
				if tt.name == "invalid arguments then success" {
					rp := lastUserMessage(t, model, 1).RetryPrompts()
					if len(rp) != 1 || rp[0].Retries != 1 || rp[0].CallID != "1" {
						t.Errorf("retry prompt = %+v", rp)
					}
				}
				return
			}
			var re *weft.RunError
			if !errors.As(err, &re) || re.Kind != tt.wantKind {
				t.Fatalf("Run error = %v, want %s", err, tt.wantKind)
			}
			if n := len(model.Requests()); n != 2 {
				t.Errorf("model got %d requests, want 2 (budget 1 retry)", n)
			}
		})
	}
}

func TestUnknownToolAndNoTools(t *testing.T) {
	t.Run("not found goes back to the model", func(t *testing.T) {
		rt := newRuntime(t)
		model := llm.NewScripted(llm.ScriptToolCalls(call("1", "nope", `{}`)), llm.ScriptText("ok"))
		ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "pong", nil })
		res, err := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{ping}}).Run(t.Context(), "go")
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		if rp := lastUserMessage(t, model, 1).RetryPrompts(); len(rp) != 1 || rp[0].Name != "nope" {
			t.Errorf("retry prompts = %+v", rp)
		}
	})
	t.Run("no tools fails the run", func(t *testing.T) {
		rt := newRuntime(t)
		model := llm.NewScripted(llm.ScriptToolCalls(call("1", "nope", `{}`)), llm.ScriptText("ok"))
		_, err := newAgent(t, rt, weft.AgentConfig{Model: model}).Run(t.Context(), "go")
		var re *weft.RunError
		if !errors.As(err, &re) || re.Kind != "no_tools" {
			t.Fatalf("Run error = %v, want no_tools", err)
		}
	})
}

func TestCancel(t *testing.T) {
	rt := newRuntime(t)
	started := make(chan struct{})
	sawCancel := make(chan bool, 1)
	block := tool(t, "block", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		close(started)
		<-ctx.Done()
		sawCancel <- tc.IsCancelled()
		return nil, ctx.Err()
	})
	fast := tool(t, "fast", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "ok", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(call("b", "block", `{}`), call("f", "fast", `{}`)), llm.ScriptText("never"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{block, fast}})
	sess := a.NewSession()
	done := make(chan *weft.Result, 1)
	go func() {
		res, _ := sess.Run(context.Background(), "go")
		done <- res
	}()
	<-started
	if err := sess.Cancel(t.Context(), "", "test", "stop"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Status != weft.StatusCancelled {
		t.Fatalf("status = %s", res.Status)
	}
	if !<-sawCancel {
		t.Error("the tool did not see the cancellation")
	}
	// The dangling call was closed with a cancelled return.
	kinds := map[string]toolsets.Kind{}
	for _, ev := range streamEvents(t, rt, sess.ID()) {
		if ev.Type == events.TypeToolReturned {
			kinds[ev.ToolCallID] = returnOf(t, ev).Kind
		}
	}
	if kinds["b"] != toolsets.KindCancelled {
		t.Errorf("kinds = %v", kinds)
	}
	if err := sess.Cancel(t.Context(), res.RunID, "test", "again"); !errors.Is(err, weft.ErrRunEnded) {
		t.Errorf("second cancel = %v, want ErrRunEnded", err)
	}
}

func TestSessionRunsShareConversation(t *testing.T) {
	rt := newRuntime(t)
	model := llm.NewScripted(llm.ScriptText("one"), llm.ScriptText("two"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model}).NewSession()
	for _, p := range []string{"first", "second"} {
		if _, err := sess.Run(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	msgs := model.Requests()[1].Messages
	var got []string
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		got = append(got, string(b))
	}
	if len(msgs) != 3 {
		t.Errorf("second request has %d messages, want 3: %v", len(msgs), got)
	}
}

// A Result's Messages is the session's whole history, earlier runs
// included, and ends with the run's own messages.
func TestResultMessagesAreSessionHistory(t *testing.T) {
	rt := newRuntime(t)
	model := llm.NewScripted(llm.ScriptText("one"), llm.ScriptText("two"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model}).NewSession()
	var got [][]string
	for _, p := range []string{"first", "second"} {
		res, err := sess.Run(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range res.Messages {
			text := string(m.Role) + ":"
			for _, p := range m.Parts {
				switch p := p.(type) {
				case llm.UserPrompt:
					text += p.Text
				case llm.Text:
					text += p.Text
				}
			}
			texts = append(texts, text)
		}
		got = append(got, texts)
	}
	want := [][]string{
		{"user:first", "assistant:one"},
		{"user:first", "assistant:one", "user:second", "assistant:two"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Result.Messages (-want +got):\n%s", d)
	}
}

// On memstore the host appends each step at once; on embedded JetStream
// the steps are pipelined (events.AppendSteps): the stream is the same.
func TestEventsOnNATSAndStream(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "jetstream"}[durable], func(t *testing.T) {
			if !durable {
				eventsOnNATSAndStream(t, newRuntime(t))
				return
			}
			rt, err := weft.Start(t.Context(), weft.Config{DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rt.Close() })
			eventsOnNATSAndStream(t, rt)
		})
	}
}

func eventsOnNATSAndStream(t *testing.T, rt *weft.Runtime) {
	filter, err := rt.Subjects().EventsOfType("session", string(events.TypeToolReturned))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *nats.Msg, 16)
	sub, err := rt.Conn().ChanSubscribe(filter, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "pong", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(call("p", "ping", `{}`)), llm.ScriptText("ok"))
	ts, _ := toolsets.New("net", []toolsets.Tool{ping})
	var got []events.Type
	for ev, err := range newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}}).RunStream(t.Context(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
	}
	want := []events.Type{events.TypeRunStarted, events.TypeToolsetInitialized, events.TypeModelRequest, events.TypeModelResponse,
		events.TypeToolRequested, events.TypeUsageSnapshot, events.TypeToolStarted, events.TypeToolReturned,
		events.TypeModelRequest, events.TypeModelResponse, events.TypeUsageSnapshot, events.TypeRunCompleted}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stream (-want +got):\n%s", d)
	}
	select {
	case m := <-ch:
		var ev events.Event
		if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Type != events.TypeToolReturned || ev.ToolCallID != "p" {
			t.Errorf("NATS event = %+v, %v", ev, err)
		}
		// The published event is the stored one (Position aside: the host
		// knows only the last position of an append; and a live copy
		// carries no MAC, which only the secret keys can check).
		for _, stored := range streamEvents(t, rt, ev.SessionID) {
			if stored.ID == ev.ID {
				ev.Position = stored.Position
				if ev.KeyID != "" || ev.MAC != "" {
					t.Errorf("the live copy carries key id %q and MAC %q, want none", ev.KeyID, ev.MAC)
				}
				ev.KeyID, ev.MAC = stored.KeyID, stored.MAC
				if d := cmp.Diff(stored, ev); d != "" {
					t.Errorf("published event (-stored +published):\n%s", d)
				}
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no tool.returned on NATS")
	}
}
