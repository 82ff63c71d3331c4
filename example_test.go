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
