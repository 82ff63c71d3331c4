package toolsets_test

import (
	"context"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// TestErrorHandlerThroughWrappers: the error handler a tool declares is
// found through every wrapper that shows it under another definition.
func TestErrorHandlerThroughWrappers(t *testing.T) {
	book, err := toolsets.NewFunc("book_room", func(context.Context, struct{}) (string, error) { return "booking-7", nil },
		toolsets.WithErrorHandler(toolsets.ErrorHandler{Name: "release_room", Run: func(context.Context, toolsets.HandlerCall) error { return nil }}))
	if err != nil {
		t.Fatal(err)
	}
	rooms, err := toolsets.New("rooms", []toolsets.Tool{book})
	if err != nil {
		t.Fatal(err)
	}
	hook := toolsets.Hook{Name: "audit"}
	prepared := func(t *testing.T, ts toolsets.Toolset) toolsets.Tool {
		t.Helper()
		p, err := ts.Prepare(t.Context(), &toolsets.ToolsetContext{})
		if err != nil || len(p.Tools) != 1 {
			t.Fatalf("Prepare = %d tools, %v", len(p.Tools), err)
		}
		return p.Tools[0]
	}
	for _, tc := range []struct {
		name string
		tool func(t *testing.T) toolsets.Tool
	}{
		{"hooked tool", func(t *testing.T) toolsets.Tool {
			ht, err := toolsets.HookTool(book, hook)
			if err != nil {
				t.Fatal(err)
			}
			return ht
		}},
		{"prefixed", func(t *testing.T) toolsets.Tool {
			w, err := toolsets.Prefixed(rooms, "p")
			if err != nil {
				t.Fatal(err)
			}
			return prepared(t, w)
		}},
		{"hooked toolset", func(t *testing.T) toolsets.Tool {
			w, err := toolsets.HookToolset(rooms, hook)
			if err != nil {
				t.Fatal(err)
			}
			return prepared(t, w)
		}},
		{"wrapper chain", func(t *testing.T) toolsets.Tool {
			w, err := toolsets.Wrap(rooms).Renamed(map[string]string{"book_room": "reserve"}).Prefixed("hotel").Toolset()
			if err != nil {
				t.Fatal(err)
			}
			return prepared(t, w)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := toolsets.ErrorHandlerOf(tc.tool(t), "release_room"); !ok {
				t.Fatal("the wrapped tool's error handler is not found")
			}
		})
	}
}
