package weft_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/toolsets"
)

// TestErrorHandlerOfAWrappedTool: a tool behind a wrapper (a hooked tool,
// a prefixed toolset) keeps its error handler: it runs when the run fails.
func TestErrorHandlerOfAWrappedTool(t *testing.T) {
	for _, kind := range []string{"hooked tool", "prefixed toolset"} {
		t.Run(kind, func(t *testing.T) {
			rt := newRuntime(t)
			var ran atomic.Int32
			book, err := newBookTool(func(context.Context, toolsets.HandlerCall) error { ran.Add(1); return nil })
			if err != nil {
				t.Fatal(err)
			}
			cfg := weft.AgentConfig{Model: failingModel()}
			want := `b1:{"tool":"book_room","handler":"release_room","reason":"failed"}`
			switch kind {
			case "hooked tool":
				ht, err := toolsets.HookTool(book, toolsets.Hook{Name: "audit"})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Tools = []toolsets.Tool{ht}
			case "prefixed toolset":
				// The model calls the tool by its own name: a renaming
				// wrapper that keeps it.
				rooms, err := toolsets.New("rooms", []toolsets.Tool{book})
				if err != nil {
					t.Fatal(err)
				}
				w, err := toolsets.Wrap(rooms).Prefixed("x").Renamed(map[string]string{"x_book_room": "book_room"}).Toolset()
				if err != nil {
					t.Fatal(err)
				}
				cfg.Toolsets = []toolsets.Toolset{w}
			}
			a := newAgent(t, rt, cfg)
			sess := a.NewSession()
			if _, err := sess.Run(t.Context(), "book"); err == nil {
				t.Fatal("the run did not fail")
			}
			waitFor(t, "error_handler.ran", func() bool { return len(handlerEvents(t, streamEvents(t, rt, sess.ID()))) == 1 })
			if h := handlerEvents(t, streamEvents(t, rt, sess.ID())); h[0] != want {
				t.Fatalf("error_handler.ran = %v, want %s", h, want)
			}
			if r := ran.Load(); r != 1 {
				t.Fatalf("the handler ran %d times", r)
			}
		})
	}
}
