package toolsets_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

type addArgs struct {
	Left  int `json:"left" jsonschema:"the left operand"`
	Right int `json:"right" jsonschema:"the right operand"`
}

type addResult struct {
	Total int `json:"total"`
}

// BenchmarkRegistryCall measures the registry's own overhead per call for a
// two-field struct tool: decoding and validating the arguments, dispatch,
// decoding into the struct, and building the canonical return (the tool
// itself only adds two numbers).
func BenchmarkRegistryCall(b *testing.B) {
	add, err := toolsets.NewFunc("add", func(_ context.Context, a addArgs) (addResult, error) {
		return addResult{Total: a.Left + a.Right}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(add); err != nil {
		b.Fatal(err)
	}
	inv := toolsets.Invocation{CallID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		ret := reg.Call(ctx, inv)
		if ret.Kind != toolsets.KindSuccess {
			b.Fatalf("kind = %s: %s", ret.Kind, ret.Content)
		}
	}
}
