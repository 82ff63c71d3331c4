package weft_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// startRuntime starts a runtime on an in-memory store.
func startRuntime() *weft.Runtime {
	rt, err := weft.Start(context.Background(), weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	return rt
}

// Status shows where a session stands: its runs, the active one, and what
// a waiting run waits for.
func ExampleSession_Status() {
	ctx := context.Background()
	rt := startRuntime()
	defer rt.Close()
	deploy, _ := toolsets.NewFunc("deploy", func(context.Context, struct{}) (string, error) { return "deployed", nil })
	model := llm.NewScripted(llm.ScriptText("hello"), llm.ScriptToolCalls(call("call_deploy", "deploy", `{}`)), llm.ScriptText("done"))
	agent, _ := rt.NewAgent("ops", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}, ApprovalRequiredTools: []string{"deploy"}})
	session := agent.NewSession()
	if _, err := session.Run(ctx, "greet"); err != nil {
		log.Fatal(err)
	}
	if _, err := session.Run(ctx, "deploy"); err != nil {
		log.Fatal(err)
	}
	st, err := session.Status(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range st.Runs {
		fmt.Printf("%s: %s %q\n", r.Prompt, r.Status, r.Output)
	}
	active, _ := st.ActiveRun()
	fmt.Println("waiting for", active.Pending.Approvals[0].ID)
	// Output:
	// greet: completed "hello"
	// deploy: waiting ""
	// waiting for call_deploy
}

// Returns reads a run's tool returns back from its events, in log order.
func ExampleReturns() {
	ctx := context.Background()
	rt := startRuntime()
	defer rt.Close()
	add, _ := toolsets.NewFunc("add", func(_ context.Context, a AddArgs) (int, error) { return a.Left + a.Right, nil })
	open, _ := toolsets.NewFunc("open_file", func(context.Context, struct{}) (string, error) {
		return "", toolsets.Feedback("no such file")
	})
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("c1", "add", `{"left":2,"right":3}`), call("c2", "open_file", `{}`)),
		llm.ScriptText("done"))
	agent, _ := rt.NewAgent("returns", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{add, open}})
	session := agent.NewSession()
	res, err := session.Run(ctx, "go")
	if err != nil {
		log.Fatal(err)
	}
	evs, _ := session.Events(ctx, res.RunID)
	rets, err := weft.Returns(evs)
	if err != nil {
		log.Fatal(err)
	}
	// Parallel calls return in any order; print them by call id.
	for _, id := range []string{"c1", "c2"} {
		for _, r := range rets {
			if r.CallID == id {
				fmt.Println(r.CallID, r.ToolName, r.Kind, string(r.Content))
			}
		}
	}
	// Output:
	// c1 add success 5
	// c2 open_file feedback "no such file"
}

// FailWith fails a deferred call with structured details; the model sees
// the reason and the details.
func ExampleFailWith() {
	ctx := context.Background()
	rt := startRuntime()
	defer rt.Close()
	build, _ := toolsets.NewFunc("build", func(context.Context, struct{}) (string, error) {
		return "", toolsets.CallDeferred("runs on the build farm", nil)
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("call_build", "build", `{}`)), llm.ScriptText("the build failed"))
	agent, _ := rt.NewAgent("builder", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{build}})
	session := agent.NewSession()
	waiting, err := session.Run(ctx, "build it")
	if err != nil {
		log.Fatal(err)
	}
	id := waiting.Pending.Deferred[0].ID
	res, err := session.Resume(ctx, weft.FailWith(id, "build-farm", "exit status 2", map[string]any{"exit_code": 2, "step": "link"}))
	if err != nil {
		log.Fatal(err)
	}
	ret := lastMessage(model, 1).ToolReturns()[0]
	fmt.Println(res.Status, ret.IsError)
	fmt.Println(string(ret.Content))
	// Output:
	// completed true
	// {"error":"the deferred call failed: exit status 2","details":{"exit_code":2,"step":"link"}}
}

// A limit of zero tool calls: the run fails before any tool runs. The zero
// UsageLimits limits nothing.
func ExampleAtMost() {
	ctx := context.Background()
	rt := startRuntime()
	defer rt.Close()
	ran := false
	probe, _ := toolsets.NewFunc("probe", func(context.Context, struct{}) (string, error) { ran = true; return "ok", nil })
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "probe", `{}`)), llm.ScriptText("done"))
	agent, _ := rt.NewAgent("limited", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{probe},
		Limits: weft.UsageLimits{ToolCalls: weft.AtMost(0)}})
	res, err := agent.Run(ctx, "probe")
	var re *weft.RunError
	fmt.Println(res.Status, errors.As(err, &re) && re.Kind == "usage_limit_exceeded", ran)
	// Output:
	// failed true false
}

// lastMessage is the last message of the model's request req.
func lastMessage(m *llm.Scripted, req int) llm.Message {
	msgs := m.Requests()[req].Messages
	return msgs[len(msgs)-1]
}
