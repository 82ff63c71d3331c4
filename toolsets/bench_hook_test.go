package toolsets_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// BenchmarkRegistryCallHooked is BenchmarkRegistryCall with three hooks,
// one at each level: the agent's rewrites the arguments, the tool's the
// content (two rewrites recorded as digests), the toolset's only looks.
func BenchmarkRegistryCallHooked(b *testing.B) {
	add, err := toolsets.NewFunc("add", func(_ context.Context, a addArgs) (addResult, error) {
		return addResult{Total: a.Left + a.Right}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	add, err = toolsets.HookTool(add, toolsets.Hook{Name: "tag", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
		ret.Content = json.RawMessage(`{"total":5,"checked":true}`)
		return nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	ts, err := toolsets.New("math", []toolsets.Tool{add})
	if err != nil {
		b.Fatal(err)
	}
	hts, err := toolsets.HookToolset(ts, toolsets.Hook{Name: "look", Before: func(context.Context, *toolsets.HookCall) error { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	reg := toolsets.NewRegistry(toolsets.WithHooks(toolsets.Hook{Name: "inject", Before: func(_ context.Context, c *toolsets.HookCall) error {
		c.Arguments = json.RawMessage(`{"left":2,"right":3}`)
		return nil
	}}))
	if err := reg.AddToolset(b.Context(), hts); err != nil {
		b.Fatal(err)
	}
	inv := toolsets.Invocation{CallID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":1,"right":3}`)}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		ret := reg.Call(ctx, inv)
		if ret.Kind != toolsets.KindSuccess || len(ret.Hooks) != 2 {
			b.Fatalf("kind = %s, hooks %+v", ret.Kind, ret.Hooks)
		}
	}
}
