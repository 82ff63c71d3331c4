package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

type xArgs struct {
	X int `json:"x"`
}

// A model that sends arguments that are not JSON gets an invalid_arguments
// return saying so and is asked again; the run goes on, and the run-level
// retry budget of the tool applies. The bad arguments are kept, byte for
// byte, in the evidence.
func TestMalformedArgumentsAreModelCorrectable(t *testing.T) {
	tests := []struct {
		name     string
		script   []llm.Response
		wantRuns []int  // the x of each run of the tool
		wantKind string // the run's failure kind; "" for completed
	}{
		{name: "corrected on the next request",
			script: []llm.Response{
				llm.ScriptToolCalls(call("1", "q", `{"x":`)),
				llm.ScriptToolCalls(call("2", "q", `{"x":7}`)),
				llm.ScriptText("done"),
			},
			wantRuns: []int{7}},
		{name: "one bad call beside a good one",
			script: []llm.Response{
				llm.ScriptToolCalls(call("1", "q", `{"x":1}`), call("2", "q", `x=2`)),
				llm.ScriptToolCalls(call("3", "q", `{"x":2}`)),
				llm.ScriptText("done"),
			},
			wantRuns: []int{1, 2}},
		{name: "the run-level budget applies",
			script: []llm.Response{
				llm.ScriptToolCalls(call("1", "q", `{"x":`)),
				llm.ScriptToolCalls(call("2", "q", `{"x":`)),
				llm.ScriptText("never"),
			},
			wantKind: "tool_retry_limit_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var mu sync.Mutex
			var runs []int
			q, err := toolsets.NewFunc("q", func(_ context.Context, a xArgs) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				runs = append(runs, a.X)
				return a.X, nil
			}, toolsets.WithMaxRetries(1))
			if err != nil {
				t.Fatal(err)
			}
			model := llm.NewScripted(tt.script...)
			sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{q}}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if tt.wantKind != "" {
				var re *weft.RunError
				if !errors.As(err, &re) || re.Kind != tt.wantKind {
					t.Fatalf("Run = %+v, %v; want a %s failure", res, err, tt.wantKind)
				}
			} else if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if d := cmp.Diff(tt.wantRuns, runs); d != "" {
				t.Errorf("tool runs (-want +got):\n%s", d)
			}

			// The model's next request carries a retry prompt that says
			// the arguments were not JSON.
			var prompt *llm.RetryPrompt
			for _, p := range lastUserMessage(t, model, 1).RetryPrompts() {
				prompt = &p
			}
			if prompt == nil || prompt.Retries != 1 || !strings.Contains(prompt.Message, "not valid JSON") {
				t.Errorf("retry prompt = %+v, want one saying the arguments are not valid JSON", prompt)
			}

			// Every event decodes strictly; the bad arguments are in
			// tool.requested as raw_arguments, and its return is
			// invalid_arguments.
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				data, err := events.Decode(ev)
				if err != nil {
					t.Fatalf("decode %s: %v", ev.Type, err)
				}
				d, ok := data.(events.ToolRequested)
				if !ok || d.RawArguments == "" {
					continue
				}
				if json.Valid([]byte(d.RawArguments)) || len(d.Arguments) != 0 {
					t.Errorf("tool.requested %s = %+v: raw arguments must be the non-JSON text alone", ev.ToolCallID, d)
				}
				for _, rev := range streamEvents(t, rt, sess.ID()) {
					if rev.Type == events.TypeToolReturned && rev.ToolCallID == ev.ToolCallID {
						if ret := returnOf(t, rev); ret.Kind != toolsets.KindInvalidArguments || ret.Attempts != 0 {
							t.Errorf("return of %s = %s after %d attempts, want invalid_arguments without running", ev.ToolCallID, ret.Kind, ret.Attempts)
						}
					}
				}
			}
		})
	}
}

// A tool asks the model to retry only the first time, with the run-level
// counter the ToolContext gives it; the counter is derived from the run's
// events, so a runtime that recovers the session sees the same count.
func TestToolSeesModelRetries(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	check := func(t *testing.T) toolsets.Tool {
		return tool(t, "check", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
			mu.Lock()
			seen = append(seen, tc.ModelRetries)
			mu.Unlock()
			if tc.ModelRetries == 0 {
				return nil, toolsets.ModelRetry("check the release notes first")
			}
			return "checked", nil
		}, toolsets.WithMaxRetries(1))
	}

	t.Run("in one runtime", func(t *testing.T) {
		seen = nil
		rt := newRuntime(t)
		model := llm.NewScripted(llm.ScriptToolCalls(call("1", "check", `{}`)), llm.ScriptToolCalls(call("2", "check", `{}`)), llm.ScriptText("done"))
		res, err := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{check(t)}}).Run(t.Context(), "go")
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("Run = %+v, %v", res, err)
		}
		if d := cmp.Diff([]int{0, 1}, seen); d != "" {
			t.Errorf("ModelRetries seen (-want +got):\n%s", d)
		}
	})

	t.Run("after recovery", func(t *testing.T) {
		seen = nil
		store := memstore.New()
		var runs atomic.Int32
		rt1 := startOn(t, store)
		m1 := llm.NewScripted(llm.ScriptToolCalls(call("1", "check", `{}`)), llm.ScriptToolCalls(call("d1", "deploy", `{}`)))
		a1, err := rt1.NewAgent("ops", weft.AgentConfig{Model: m1, Tools: []toolsets.Tool{check(t), deployTool(t, &runs)}})
		if err != nil {
			t.Fatal(err)
		}
		sess := a1.NewSession()
		waiting, err := sess.Run(t.Context(), "go")
		if err != nil || waiting.Status != weft.StatusWaiting {
			t.Fatalf("Run = %+v, %v", waiting, err)
		}
		rt1.Close()

		// A new runtime on the same log: its tool only knows the count
		// from the events.
		rt2 := startOn(t, store)
		m2 := llm.NewScripted(llm.ScriptToolCalls(call("2", "check", `{}`)), llm.ScriptText("done"))
		a2, err := rt2.NewAgent("ops", weft.AgentConfig{Model: m2, Tools: []toolsets.Tool{check(t), deployTool(t, &runs)}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a2.Session(sess.ID()).Resume(t.Context(), weft.Approve("d1", "ui", nil))
		if err != nil || res.Status != weft.StatusCompleted || res.Output != "done" {
			t.Fatalf("Resume = %+v, %v", res, err)
		}
		if d := cmp.Diff([]int{0, 1}, seen); d != "" {
			t.Errorf("ModelRetries seen (-want +got):\n%s", d)
		}
	})
}
