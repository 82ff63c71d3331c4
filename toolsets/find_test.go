package toolsets_test

import (
	"context"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// marked is a tool that is something beneath its wrappers.
type marked struct{ toolsets.Tool }

// TestFindThroughWrappers: Registry.Tool returns the tool registered under
// a name, and Find reaches what it is through renames and embedding.
func TestFindThroughWrappers(t *testing.T) {
	type noArgs struct{}
	fn, err := toolsets.NewContextFunc("inner", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	plain, err := toolsets.NewContextFunc("plain", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	m := &marked{Tool: fn}
	ts, err := toolsets.New("set", []toolsets.Tool{m, plain})
	if err != nil {
		t.Fatal(err)
	}
	w, err := toolsets.Wrap(ts).Renamed(map[string]string{"inner": "other"}).Prefixed("p").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	got, ok := reg.Tool("p_other")
	if !ok || got.Definition().Name != "p_other" {
		t.Fatalf("Tool(p_other) = %v, %v", got, ok)
	}
	if f, ok := toolsets.Find[*marked](got); !ok || f != m {
		t.Errorf("Find did not reach the marked tool: %v, %v", f, ok)
	}
	p, _ := reg.Tool("p_plain")
	if _, ok := toolsets.Find[*marked](p); ok {
		t.Error("Find found a marked tool beneath a plain one")
	}
	if _, ok := reg.Tool("other"); ok {
		t.Error("Tool found a name the registry does not have")
	}
	if _, ok := toolsets.Find[*marked](nil); ok {
		t.Error("Find found a tool in nil")
	}
}
