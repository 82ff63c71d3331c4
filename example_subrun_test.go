package weft_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A planner delegates to a researcher: the researcher is a tool of the
// planner, and each call of it is a sub-run in a child session. The
// planner's call waits (run.waiting) until the child ends; its output is
// the call's return.
func ExampleAgentTool() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	researcher, err := rt.NewAgent("researcher", weft.AgentConfig{
		Model: llm.NewScripted(llm.ScriptText("High tide is at 14:10.")),
	})
	if err != nil {
		panic(err)
	}
	ask, err := weft.AgentTool(researcher, weft.WithMaxDepth(2), weft.WithMaxFanOut(4))
	if err != nil {
		panic(err)
	}
	plannerModel := llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "researcher", Arguments: json.RawMessage(`{"prompt":"When is high tide?"}`)}),
		llm.ScriptText("Sail at 13:30, before high tide."),
	)
	planner, err := rt.NewAgent("planner", weft.AgentConfig{Model: plannerModel, Tools: []toolsets.Tool{ask}})
	if err != nil {
		panic(err)
	}

	sess := planner.NewSession()
	res, err := sess.Run(ctx, "Plan a sail for today.")
	if err != nil {
		panic(err)
	}
	// Run returns when the planner first settles: it waits for its
	// sub-run. Settle waits until it ends (or waits for a person).
	res, err = sess.Settle(ctx, res.RunID)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Output)
	fmt.Println("the planner saw:", string(plannerModel.Requests()[1].Messages[2].ToolReturns()[0].Content))
	// Output:
	// completed Sail at 13:30, before high tide.
	// the planner saw: "High tide is at 14:10."
}
