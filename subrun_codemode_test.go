package weft_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestAgentToolFanOutFromProgram: the calls a program (code mode) makes of
// an agent tool count against its fan-out limit with the other calls of
// agent tools of the response that ran the program, those the model made
// itself included, in the order they were made; the calls past the limit
// are refused as they are when the model makes them all. A program's
// calls run one after another, each child ending before the next call,
// and still count: the limit bounds the sub-runs a response starts, so a
// program cannot start more of them than the model could.
func TestAgentToolFanOutFromProgram(t *testing.T) {
	helperArgs, _ := json.Marshal(map[string]string{"prompt": "a"})
	for _, tc := range []struct {
		name    string
		calls   []llm.ToolCall
		opts    []weft.RunOption
		want    map[string]toolsets.Kind
		refused string // the call whose return names the limit
	}{
		{
			name: "three calls of one program",
			calls: []llm.ToolCall{codeCall("c1", `out = [helper(prompt="a"), helper(prompt="b")]
out.append(helper(prompt="c"))
print(out)`)},
			opts:    []weft.RunOption{weft.CodeMode()},
			want:    map[string]toolsets.Kind{"c1.1": toolsets.KindSuccess, "c1.2": toolsets.KindSuccess, "c1.3": toolsets.KindUserError},
			refused: "c1",
		},
		{
			name: "the model's call then a program's two",
			calls: []llm.ToolCall{{ID: "c1", Name: "helper", Arguments: helperArgs},
				codeCall("c2", `print(helper(prompt="b"))
print(helper(prompt="c"))`)},
			want:    map[string]toolsets.Kind{"c1": toolsets.KindSuccess, "c2.1": toolsets.KindSuccess, "c2.2": toolsets.KindUserError},
			refused: "c2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			helper := newAgentNamed(t, rt, "helper", weft.AgentConfig{Model: llm.AlwaysText("ok")})
			at := agentTool(t, helper, weft.WithMaxFanOut(2))
			model := llm.NewScripted(llm.ScriptToolCalls(tc.calls...), llm.ScriptText("done"))
			env := &codemode.Env{Tools: []toolsets.Tool{at}}
			boss := newAgentNamed(t, rt, "boss", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{at, codemode.NewTool(env)}})
			sess, res := runSettled(t, boss, "go", tc.opts...)
			if res.Status != weft.StatusCompleted {
				t.Fatalf("parent %s %v", res.Status, res.Err)
			}
			kinds := returnKinds(t, rt, sess.ID())
			for call, want := range tc.want {
				if kinds[call] != want {
					t.Errorf("return of %s is %q; want %q (all: %v)", call, kinds[call], want, kinds)
				}
			}
			seen := false
			for _, r := range lastUserMessage(t, model, 1).ToolReturns() {
				if r.CallID == tc.refused {
					seen = true
					if !strings.Contains(string(r.Content), "fan-out limit of 2") {
						t.Errorf("the program's return does not name the limit: %s", r.Content)
					}
				}
			}
			if !seen {
				t.Errorf("the model got no return of %s", tc.refused)
			}
		})
	}
}
