package jstest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestJSWorkerLargeResult: the JavaScript worker has no blob store; a
// result of 2 MB (20 MB), over NATS's max payload, is reported as an
// execution error saying so, instead of a publish that fails and leaves
// the node sending the call again until it gives up. Arguments by
// reference (over the bus limit) are refused without running the tool.
func TestJSWorkerLargeResult(t *testing.T) {
	for _, size := range []int{2 << 20, 20 << 20} {
		t.Run(fmt.Sprintf("%dMB", size>>20), func(t *testing.T) {
			rt, url := node(t)
			w := startJSWorker(t, url, "js-big")
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			ts, err := rt.RemoteTools(ctx, "js_big")
			if err != nil {
				t.Fatal(err)
			}
			// The model asks for the large arguments itself: a prompt
			// holding them would be a start command over the bus limit.
			args, _ := json.Marshal(map[string]any{"bytes": size, "pad": strings.Repeat("p", size)})
			model := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
				if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
					return &llm.Response{Text: "done"}, nil
				}
				return &llm.Response{ToolCalls: []llm.ToolCall{call("big", "js_big", fmt.Sprintf(`{"bytes":%d}`, size)), call("args", "js_big", string(args))}}, nil
			})
			a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
			if err != nil {
				t.Fatal(err)
			}
			s := a.NewSession()
			res, err := s.Run(ctx, "go")
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("run: %v, %v; want completed", res, err)
			}
			rets := returns(t, s, res.RunID)
			for id, want := range map[string]string{"big": "exceeds the bus limit of", "args": "are in the blob store, which this worker cannot read"} {
				r := rets[id]
				var msg string
				_ = json.Unmarshal(r.Content, &msg)
				if r.Kind != toolsets.KindExecution || !strings.Contains(msg, want) {
					t.Errorf("return of %s: %s %q, want an execution error saying %q", id, r.Kind, msg, want)
				}
			}
			// The tool ran once: the node did not send the call again.
			if got := w.expect(t, "STARTED"); got != "STARTED js-big big" {
				t.Errorf("worker printed %q", got)
			}
			select {
			case l := <-w.lines:
				if strings.HasPrefix(l, "STARTED") {
					t.Errorf("the worker started a call again: %q", l)
				}
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}
