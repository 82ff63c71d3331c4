package weft_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A tool that emits progress from goroutines of its own, while it runs and
// after it returned, leaves its run to settle as usual: a report from a
// stray goroutine neither races with the goroutine running the run's tasks
// nor takes a task no goroutine will run (run with -race).
func TestProgressFromAToolsGoroutines(t *testing.T) {
	rt := newRuntime(t)
	var wg sync.WaitGroup
	chatty := tool(t, "chatty", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					_ = tc.Emit("tick", map[string]int{"n": 1}) // after the return it may be refused
				}
			}()
		}
		return "done", nil
	})
	for i := range 30 {
		model := llm.NewScripted(llm.ScriptToolCalls(call("c", "chatty", `{}`)), llm.ScriptText("ok"))
		a := newAgentNamed(t, rt, "chatty"+string(rune('a'+i%26))+string(rune('a'+i/26)), weft.AgentConfig{Model: model, Tools: []toolsets.Tool{chatty}})
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		res, err := a.Run(ctx, "go")
		cancel()
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("run %d: %+v, %v", i, res, err)
		}
	}
	wg.Wait()
}
