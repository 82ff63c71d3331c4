package weft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

type AddArgs struct {
	Left  int `json:"left"`
	Right int `json:"right"`
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// The seed's first example: a tool that adds two numbers, a scripted model
// that calls it and then answers "done".
func Example() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	add, err := toolsets.NewFunc("add", func(ctx context.Context, a AddArgs) (map[string]int, error) {
		return map[string]int{"total": a.Left + a.Right}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("call_add", "add", `{"left": 2, "right": 3}`)),
		llm.ScriptText("done"),
	)
	agent, err := rt.NewAgent("adder", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{add}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Run(ctx, "Add two numbers")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Output)
	last := model.Requests()[1].Messages
	fmt.Println(string(last[len(last)-1].ToolReturns()[0].Content))
	// Output:
	// completed done
	// {"total":5}
}

type LookupArgs struct {
	TicketID       string `json:"ticket_id"`
	IncludeHistory bool   `json:"include_history,omitempty"`
}

// The seed's lookup and fetch_ticket tools: typed arguments with a default,
// run in parallel in one response, returns handed back in model order.
func Example_parallel() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	lookup, _ := toolsets.NewFunc("lookup", func(ctx context.Context, a LookupArgs) (map[string]any, error) {
		return map[string]any{"ticket_id": a.TicketID, "include_history": a.IncludeHistory}, nil
	})
	fetch, _ := toolsets.NewFunc("fetch_ticket", func(ctx context.Context, a LookupArgs) (map[string]any, error) {
		return map[string]any{"ticket_id": a.TicketID, "include_history": a.IncludeHistory}, nil
	})
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("c1", "lookup", `{"ticket_id": "T-1"}`), call("c2", "fetch_ticket", `{"ticket_id": "T-2", "include_history": true}`)),
		llm.ScriptText("two tickets"),
	)
	agent, _ := rt.NewAgent("tickets", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{lookup, fetch}})
	res, err := agent.Run(ctx, "look up tickets")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Output)
	for _, r := range model.Requests()[1].Messages[2].ToolReturns() {
		fmt.Println(r.CallID, string(r.Content))
	}
	// Output:
	// completed two tickets
	// c1 {"include_history":false,"ticket_id":"T-1"}
	// c2 {"include_history":true,"ticket_id":"T-2"}
}

// The seed's append_audit_line: a sequential tool runs in model order.
func Example_sequential() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	type Line struct {
		Line string `json:"line"`
	}
	var lines []string
	audit, _ := toolsets.NewFunc("append_audit_line", func(ctx context.Context, a Line) (map[string]bool, error) {
		lines = append(lines, a.Line) // safe: sequential calls never overlap
		return map[string]bool{"written": true}, nil
	}, toolsets.WithSequential(true))
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("1", "append_audit_line", `{"line":"first"}`), call("2", "append_audit_line", `{"line":"second"}`)),
		llm.ScriptText("logged"),
	)
	agent, _ := rt.NewAgent("auditor", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{audit}})
	res, err := agent.Run(ctx, "audit")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output, lines)
	// Output:
	// logged [first second]
}

// The seed's deploy tool: it asks for approval until approved; the run
// waits, and a resume with the approval completes it.
func Example_approval() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	deploy, _ := toolsets.NewContextFunc("deploy", func(ctx context.Context, tc *toolsets.ToolContext, _ struct{}) (map[string]bool, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("deploy production", map[string]any{"risk": "high"})
		}
		return map[string]bool{"approved": true}, nil
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("call_deploy", "deploy", `{}`)), llm.ScriptText("deployed"))
	agent, _ := rt.NewAgent("deployer", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}})
	session := agent.NewSession()
	waiting, err := session.Run(ctx, "deploy")
	if err != nil {
		log.Fatal(err)
	}
	p := waiting.Pending.Approvals[0]
	fmt.Println(waiting.Status, p.ID, p.Reason, p.Metadata["risk"])
	res, err := session.Resume(ctx, weft.Approve(p.ID, "ui", nil))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Output)
	// Output:
	// waiting call_deploy deploy production high
	// completed deployed
}
