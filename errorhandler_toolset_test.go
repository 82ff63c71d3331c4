package weft_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// lifecycleCount counts a toolset's enters and exits.
type lifecycleCount struct{ enters, exits atomic.Int32 }

// roomToolset builds a toolset of kind (static, function, dynamic) that
// offers book_room, which declares release_room; the dynamic one counts
// its enters and exits in n.

func roomToolset(t *testing.T, kind string, release func(context.Context, toolsets.HandlerCall) error, n *lifecycleCount) toolsets.Toolset {
	t.Helper()
	handler := toolsets.WithErrorHandler(toolsets.ErrorHandler{Name: "release_room", Run: release})
	var (
		ts  toolsets.Toolset
		err error
	)
	switch kind {
	case "static":
		book, berr := newBookTool(release)
		if berr != nil {
			t.Fatal(berr)
		}
		ts, err = toolsets.New("rooms", []toolsets.Tool{book})
	case "function":
		var fs *toolsets.FunctionToolset
		if fs, err = toolsets.NewFunction("rooms"); err == nil {
			err = toolsets.AddPlain(fs, "book_room", func(context.Context, noArgs) (string, error) { return "booking-7", nil }, handler)
		}
		ts = fs
	case "dynamic":
		// Offers book_room only to a preparation for a run of this
		// agent: the lookup must prepare with the run's context.
		ts, err = toolsets.NewDynamic("rooms", toolsets.DynamicFuncs{
			Tools: func(_ context.Context, tc *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
				if tc.AgentID != t.Name() || tc.RunID == "" || tc.SessionID == "" {
					return nil, nil
				}
				book, err := toolsets.NewFunc("book_room", func(context.Context, noArgs) (string, error) { return "booking-7", nil }, handler)
				return []toolsets.Tool{book}, err
			},
			Enter: func(context.Context, *toolsets.ToolsetContext) error { n.enters.Add(1); return nil },
			Exit:  func(context.Context, *toolsets.ToolsetContext) error { n.exits.Add(1); return nil },
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestErrorHandlerOfAToolsetTool: a handler declared by a tool the agent
// gets through a toolset runs once when the run fails and once when it is
// cancelled, and is recorded in error_handler.ran.
func TestErrorHandlerOfAToolsetTool(t *testing.T) {
	for _, kind := range []string{"static", "function", "dynamic"} {
		for _, ending := range []string{"failed", "cancelled"} {
			t.Run(kind+"/"+ending, func(t *testing.T) {
				rt := newRuntime(t)
				var ran atomic.Int32
				var told atomic.Value
				release := func(_ context.Context, c toolsets.HandlerCall) error { ran.Add(1); told.Store(c); return nil }
				var n lifecycleCount
				cfg := weft.AgentConfig{Toolsets: []toolsets.Toolset{roomToolset(t, kind, release, &n)}}
				if ending == "failed" {
					cfg.Model = failingModel()
				} else {
					cfg.Model = bookThenDeploy()
					cfg.Tools = []toolsets.Tool{waitingDeploy(t)}
				}
				a := newAgent(t, rt, cfg)
				sess := a.NewSession()
				if ending == "cancelled" {
					cancelWhileWaiting(t, sess, "book")
				} else if _, err := sess.Run(t.Context(), "book"); err == nil {
					t.Fatal("the run did not fail")
				}
				h := oneHandlerRan(t, rt, sess.ID())
				if want := `b1:{"tool":"book_room","handler":"release_room","reason":"` + ending + `"}`; h[0] != want {
					t.Fatalf("error_handler.ran = %v, want %s", h, want)
				}
				if c := told.Load().(toolsets.HandlerCall); c.CallID != "b1" || c.Reason != ending || string(c.Content) != `"booking-7"` {
					t.Fatalf("the handler was told %+v", c)
				}
				if _, err := sess.Status(t.Context()); err != nil { // asked again: not run again
					t.Fatal(err)
				}
				// The lookup exits what it entered (the run's own
				// preparation and the lookup's: one enter and exit each).
				if kind == "dynamic" {
					waitFor(t, "the toolset's exits", func() bool { return n.exits.Load() == 2 })
					if e := n.enters.Load(); e != 2 {
						t.Fatalf("entered %d times, want 2 (the run, the handler lookup)", e)
					}
				}
				if r := ran.Load(); r != 1 {
					t.Fatalf("the handler ran %d times", r)
				}
			})
		}
	}
}

// TestErrorHandlerNotDeclared: a registered handler that no tool of the
// agent declares in this process (here: the toolset no longer offers the
// tool, or fails to prepare) is recorded as not found, with an error
// naming why, and not run again.
func TestErrorHandlerNotDeclared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tools  func() ([]toolsets.Tool, error)
		errors []string
	}{
		{"not offered", func() ([]toolsets.Tool, error) { return nil, nil },
			[]string{"no tool of the agent in this process declares the error handler: release_room of book_room"}},
		{"toolset fails", func() ([]toolsets.Tool, error) { return nil, errors.New("rooms service gone") },
			[]string{"no tool of the agent in this process declares the error handler: release_room of book_room", "toolsets not prepared", "rooms service gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			var gone atomic.Bool
			var ran atomic.Int32
			ts, err := toolsets.NewDynamic("rooms", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
				if gone.Load() {
					return tc.tools()
				}
				book, err := newBookTool(func(context.Context, toolsets.HandlerCall) error { ran.Add(1); return nil })
				return []toolsets.Tool{book}, err
			}})
			if err != nil {
				t.Fatal(err)
			}
			model := llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
					gone.Store(true) // from now on no tool declares release_room
					return nil, errors.New("the model is down")
				}
				return &llm.Response{ToolCalls: []llm.ToolCall{call("b1", "book_room", `{}`)}}, nil
			})
			a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
			sess := a.NewSession()
			if _, err := sess.Run(t.Context(), "book"); err == nil {
				t.Fatal("the run did not fail")
			}
			h := oneHandlerRan(t, rt, sess.ID())
			for _, want := range tc.errors {
				if !strings.Contains(h[0], want) {
					t.Fatalf("error_handler.ran = %v, want an error with %q", h, want)
				}
			}
			if _, err := sess.Status(t.Context()); err != nil { // asked again
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			if ran.Load() != 0 {
				t.Fatalf("a handler ran %d times", ran.Load())
			}
			if n := len(handlerEvents(t, streamEvents(t, rt, sess.ID()))); n != 1 {
				t.Fatalf("error_handler.ran recorded %d times", n)
			}
		})
	}
}
