package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestTailShowsRedactedLiveEvents: weft tail prints the live copies of the
// events, which lack the tools' private metadata and say what was
// redacted; the log keeps it.
func TestTailShowsRedactedLiveEvents(t *testing.T) {
	const secret = "SECRET-session-cookie-31337"
	n, _ := testNode(t)
	leaky, err := toolsets.NewFunc("leaky", func(context.Context, struct{}) (toolsets.Result, error) {
		return toolsets.Result{Content: "ok", PrivateMetadata: map[string]any{"cookie": secret}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := n.rt.NewAgent("leaky-agent", weft.AgentConfig{Model: llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "leaky", Arguments: []byte(`{}`)}), llm.ScriptText("done")),
		Tools: []toolsets.Tool{leaky}})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	sess := agent.NewSession()
	line := tailReturned(t, ctx, n.url, sess)
	if strings.Contains(line, secret) || !strings.Contains(line, "[redacted: return.private_metadata]") {
		t.Errorf("weft tail printed %q, want the return without its private metadata, marked redacted", line)
	}
	stored, err := n.rt.Store().ReadStream(ctx, events.SessionStream(sess.ID()), 0)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, ev := range stored {
		kept = kept || ev.Type == events.TypeToolReturned && strings.Contains(string(ev.Data), secret)
	}
	if !kept {
		t.Error("the log lost the private metadata")
	}
}

// TestTailShowsDataByReference: the live copy of an event whose data is
// in the blob store carries the reference, and weft tail says so instead
// of failing to decode it.
func TestTailShowsDataByReference(t *testing.T) {
	n, _ := testNode(t)
	big, err := toolsets.NewFunc("big", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", events.DefaultInlineBytes+1024), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := n.rt.NewAgent("big-agent", weft.AgentConfig{Model: llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "big", Arguments: []byte(`{}`)}), llm.ScriptText("done")),
		Tools: []toolsets.Tool{big}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	line := tailReturned(t, ctx, n.url, agent.NewSession())
	if !strings.Contains(line, "data by reference: sha256:") {
		t.Errorf("weft tail printed %q, want the event's data shown as a blob reference", line)
	}
}

// tailReturned runs weft tail for one tool.returned event on the node at
// url while sess runs to completion, and returns the line tail printed.
func tailReturned(t *testing.T, ctx context.Context, url string, sess *weft.Session) string {
	t.Helper()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan struct{})
	var tailErr error
	go func() {
		defer close(done)
		tailErr = run(ctx, []string{"tail", "weft.evt.session.*.tool.returned", "--nats", url, "--count", "1"}, out, errOut)
	}()
	errOut.waitFor(t, ctx, done, "tailing")
	if res, err := sess.Run(ctx, "go"); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	line := out.waitFor(t, ctx, done, "tool.returned")
	<-done
	if tailErr != nil {
		t.Fatal(tailErr)
	}
	return line
}

// --deltas follows the live model output of the streams the event filter
// names, whatever its type tokens.
func TestTailDeltaFilter(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{"weft.evt.>", "weft.delta.>"},
		{"weft.>", "weft.delta.>"},
		{"weft.evt.session.>", "weft.delta.session.>"},
		{"weft.evt.session.s1.>", "weft.delta.session.s1"},
		{"weft.evt.session.*.tool.returned", "weft.delta.session.*"},
		{"weft.*.session.s1.model.response", "weft.delta.session.s1"},
	} {
		if err := checkEventFilter(bus.Default, tc.filter); err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if got := deltaFilter(bus.Default, tc.filter); got != tc.want {
			t.Errorf("deltaFilter(%q) = %q, want %q", tc.filter, got, tc.want)
		}
	}
}
