package weft_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func init() {
	for _, m := range []string{"handler-start", "handler-recover", "handler-toolset-start", "handler-toolset-recover"} {
		childModes[m] = handlerChild
	}
}

// bookTool books a room and declares the error handler release_room,
// which run calls.
func bookTool(t *testing.T, release func(context.Context, toolsets.HandlerCall) error) toolsets.Tool {
	t.Helper()
	book, err := newBookTool(release)
	if err != nil {
		t.Fatal(err)
	}
	return book
}

func newBookTool(release func(context.Context, toolsets.HandlerCall) error) (toolsets.Tool, error) {
	return toolsets.NewFunc("book_room", func(context.Context, noArgs) (string, error) { return "booking-7", nil },
		toolsets.WithErrorHandler(toolsets.ErrorHandler{Name: "release_room", Run: release}))
}

// failingModel books a room, then fails: the run fails critically.
func failingModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
			return nil, errors.New("the model is down")
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "b1", Name: "book_room", Arguments: []byte(`{}`)}}}, nil
	})
}

func handlerEvents(t *testing.T, evs []events.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Type == events.TypeErrorHandlerRan {
			out = append(out, ev.ToolCallID+":"+string(ev.Data))
		}
	}
	return out
}

// oneHandlerRan waits for a session's error_handler.ran and returns its
// error_handler.ran events.
func oneHandlerRan(t *testing.T, rt *weft.Runtime, session string) []string {
	t.Helper()
	waitFor(t, "error_handler.ran", func() bool { return len(handlerEvents(t, streamEvents(t, rt, session))) == 1 })
	return handlerEvents(t, streamEvents(t, rt, session))
}

// bookThenDeploy books a room, then deploys; with waitingDeploy its run
// waits for an approval after the booking.
func bookThenDeploy() llm.Model {
	return llm.NewScripted(llm.ScriptToolCalls(call("b1", "book_room", `{}`)), llm.ScriptToolCalls(call("d1", "deploy", `{}`)))
}

// waitingDeploy is a deploy tool that needs an approval no one gives.
func waitingDeploy(t *testing.T) toolsets.Tool {
	t.Helper()
	return tool(t, "deploy", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		return nil, toolsets.ApprovalRequired("prod", nil)
	})
}

// cancelWhileWaiting runs prompt in sess, checks that the run waits, and
// cancels it.
func cancelWhileWaiting(t *testing.T, sess *weft.Session, prompt string) {
	t.Helper()
	res := runWaiting(t, sess, prompt)
	if err := sess.Cancel(t.Context(), res.RunID, "ana", "changed my mind"); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestErrorHandlerRunsOnceWhenTheRunFails(t *testing.T) {
	rt := newRuntime(t)
	var ran atomic.Int32
	var got atomic.Value
	book := bookTool(t, func(_ context.Context, c toolsets.HandlerCall) error {
		ran.Add(1)
		got.Store(c)
		return nil
	})
	a := newAgent(t, rt, weft.AgentConfig{Model: failingModel(), Tools: []toolsets.Tool{book}})
	sess := a.NewSession()
	if _, err := sess.Run(t.Context(), "book"); err == nil {
		t.Fatal("the run did not fail")
	}
	h := oneHandlerRan(t, rt, sess.ID())
	evs := streamEvents(t, rt, sess.ID())
	if h[0] != `b1:{"tool":"book_room","handler":"release_room","reason":"failed"}` {
		t.Fatalf("error_handler.ran = %v", h)
	}
	c := got.Load().(toolsets.HandlerCall)
	if c.CallID != "b1" || c.Reason != "failed" || string(c.Content) != `"booking-7"` {
		t.Fatalf("the handler was told %+v", c)
	}
	// The registration is in the call's own tool.returned.
	for _, ev := range evs {
		if ev.Type == events.TypeToolReturned && !strings.Contains(string(ev.Data), `"weft.error_handlers":["release_room"]`) {
			t.Fatalf("tool.returned does not record the registration: %s", ev.Data)
		}
	}
	// Asking the session again (a later command) does not run it again.
	if _, err := sess.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if ran.Load() != 1 {
		t.Fatalf("the handler ran %d times", ran.Load())
	}
}

func TestErrorHandlerOnCancelAndNotOnSuccess(t *testing.T) {
	rt := newRuntime(t)
	var ran atomic.Int32
	release := func(context.Context, toolsets.HandlerCall) error { ran.Add(1); return errors.New("room service down") }
	// Completed: the handler is not run.
	ok, err := rt.NewAgent("completes", weft.AgentConfig{Model: llm.NewScripted(llm.ScriptToolCalls(call("b1", "book_room", `{}`)), llm.ScriptText("booked")), Tools: []toolsets.Tool{bookTool(t, release)}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ok.NewSession().Run(t.Context(), "book"); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	// Cancelled while a later call waits for approval: it runs, and its
	// error is recorded.
	a := newAgent(t, rt, weft.AgentConfig{Model: bookThenDeploy(), Tools: []toolsets.Tool{bookTool(t, release), waitingDeploy(t)}})
	sess := a.NewSession()
	cancelWhileWaiting(t, sess, "book and deploy")
	h := oneHandlerRan(t, rt, sess.ID())
	if !strings.Contains(h[0], `"reason":"cancelled"`) || !strings.Contains(h[0], `room service down`) {
		t.Fatalf("error_handler.ran = %v", h)
	}
	if ran.Load() != 1 {
		t.Fatalf("the handler ran %d times; want once (the cancelled run only)", ran.Load())
	}
}

func handlerChild(mode string) error {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{DataDir: os.Getenv(envDir), Sync: bus.SyncAlways})
	if err != nil {
		return err
	}
	defer rt.Close()
	book, err := newBookTool(func(ctx context.Context, c toolsets.HandlerCall) error {
		if strings.HasSuffix(mode, "-start") {
			fmt.Println("HANDLER ENTERED")
			select {} // killed before it does anything
		}
		f, err := os.OpenFile(os.Getenv(envMark), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "RELEASED %s\n", c.CallID)
		return err
	})
	if err != nil {
		return err
	}
	cfg := weft.AgentConfig{Model: failingModel(), Tools: []toolsets.Tool{book}}
	if strings.HasPrefix(mode, "handler-toolset-") {
		// The tool comes through a toolset, registered again by each
		// process with the agent.
		rooms, err := toolsets.New("rooms", []toolsets.Tool{book})
		if err != nil {
			return err
		}
		cfg.Tools, cfg.Toolsets = nil, []toolsets.Toolset{rooms}
	}
	a, err := rt.NewAgent("booker", cfg)
	if err != nil {
		return err
	}
	recovered, err := rt.Recover(ctx)
	if err != nil {
		return err
	}
	id := os.Getenv(envSession)
	if strings.HasSuffix(mode, "-start") {
		_, err := a.Session(id).Run(ctx, "book")
		fmt.Println("FAILED", err != nil)
		select {} // wait to be killed
	}
	if len(recovered) == 0 {
		fmt.Println("RESULT nothing due")
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := rt.Store().ReadStream(ctx, events.SessionStream(id), 0)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type == events.TypeErrorHandlerRan {
				fmt.Println("RESULT handler recorded")
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("the handler was not recorded")
}

// TestErrorHandlerAcrossRestart kills a process whose run failed while
// its error handler had only just been entered (so it did nothing and was
// not recorded), then starts processes on the same data directory: the
// first runs the handler and records it; the next finds nothing due. The
// kill waits for the handler to be entered, which happens after the run's
// failure is appended (synced), so the second process always sees the
// handler due: the test has no race with the recovery scan. The handler's
// tool is a loose tool of the agent, or a tool of its toolset.
func TestErrorHandlerAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tc := range []struct{ name, modes string }{{"loose", "handler"}, {"toolset", "handler-toolset"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, session := t.TempDir(), "handler-recovery"
			mark := filepath.Join(t.TempDir(), "mark")
			cmd, out := startChild(t, tc.modes+"-start", dir, session, mark)
			readLine(t, out, "HANDLER ENTERED")
			kill(t, cmd)

			for i, want := range []string{"RESULT handler recorded", "RESULT nothing due"} {
				cmd, out = startChild(t, tc.modes+"-recover", dir, session, mark)
				if line := readLine(t, out, "RESULT"); line != want {
					t.Fatalf("recovery %d: %s, want %s", i+1, line, want)
				}
				_ = cmd.Wait()
			}
			b, err := os.ReadFile(mark)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != "RELEASED b1" {
				t.Fatalf("the handler's effects:\n%s\nwant one release of b1", got)
			}
			h := handlerEvents(t, checkLog(t, dir, session))
			if len(h) != 1 {
				t.Fatalf("error_handler.ran recorded %d times: %v", len(h), h)
			}
			if strings.Contains(h[0], `"error"`) {
				t.Fatalf("error_handler.ran records an error: %s", h[0])
			}
		})
	}
}
