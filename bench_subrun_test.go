package weft_test

import (
	"fmt"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// BenchmarkAgentTool measures a parent run that delegates to 1 or 4
// sub-runs in one response (each child one model request), from Run to
// the parent's completion (Settle), in memory.
func BenchmarkAgentTool(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			store := memstore.New()
			defer store.Close()
			rt, err := weft.Start(b.Context(), weft.Config{Store: store})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			child, err := rt.NewAgent("child", weft.AgentConfig{Model: llm.AlwaysText("done")})
			if err != nil {
				b.Fatal(err)
			}
			tl, err := weft.AgentTool(child)
			if err != nil {
				b.Fatal(err)
			}
			prompts := make([]string, n)
			for i := range prompts {
				prompts[i] = fmt.Sprintf("task %d", i)
			}
			parent, err := rt.NewAgent("parent", weft.AgentConfig{Model: delegating("child", prompts...), Tools: []toolsets.Tool{tl}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				sess := parent.NewSession()
				res, err := sess.Run(ctx, "go")
				if err != nil {
					b.Fatal(err)
				}
				if res, err = sess.Settle(ctx, res.RunID); err != nil || res.Status != weft.StatusCompleted {
					b.Fatalf("parent %v, %v", res, err)
				}
			}
		})
	}
}
