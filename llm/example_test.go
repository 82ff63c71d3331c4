package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-run/weft/llm"
)

// A scripted model answers the seeds' "add" example: first a tool call,
// then the final text. It records what it was asked.
func ExampleNewScripted() {
	model := llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}),
		llm.ScriptText("done"),
	)
	ctx := context.Background()

	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("Add two numbers")}}
	first, _ := model.Request(ctx, req)
	for _, c := range first.ToolCalls {
		fmt.Printf("call %s %s(%s)\n", c.ID, c.Name, c.Arguments)
	}
	fmt.Println("finish:", first.FinishReason)

	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		llm.ToolReturn{CallID: "call_add", Name: "add", Content: json.RawMessage(`{"total":5}`)},
	}})
	second, _ := model.Request(ctx, req)
	fmt.Println("text:", second.Text)
	// Usage is estimated from bytes: the second request holds 52 bytes of
	// prompt, call and return (13 tokens); "done" is 1 token.
	fmt.Printf("usage: %+v\n", second.Usage)

	_, err := model.Request(ctx, req)
	fmt.Println("used up:", errors.Is(err, llm.ErrNoResponses))
	fmt.Println("requests recorded:", len(model.Requests()))
	// Output:
	// call call_add add({"left":2,"right":3})
	// finish: tool_calls
	// text: done
	// usage: {InputTokens:13 OutputTokens:1 CacheReadTokens:0 CacheWriteTokens:0 Requests:1}
	// used up: true
	// requests recorded: 3
}

// AlwaysText is the seeds' TestModel.text("ready").
func ExampleAlwaysText() {
	model := llm.AlwaysText("ready")
	for range 2 {
		resp, _ := model.Request(context.Background(), &llm.Request{})
		fmt.Println(resp.Text)
	}
	// Output:
	// ready
	// ready
}

// A function model decides from the last tool return.
func ExampleFunc() {
	model := llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last, _ := req.LastMessage()
		if rets := last.ToolReturns(); len(rets) > 0 {
			return &llm.Response{Text: "the total is " + rets[0].ContentText()}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{
			{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)},
		}}, nil
	})
	ctx := context.Background()

	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("Add 2 and 3")}}
	first, _ := model.Request(ctx, req)
	fmt.Println("asks for:", first.ToolCalls[0].Name)

	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		llm.ToolReturn{CallID: "call_add", Name: "add", Content: llm.TextContent("5")},
	}})
	second, _ := model.Request(ctx, req)
	fmt.Println(second.Text)
	// Output:
	// asks for: add
	// the total is 5
}

// Stream gives any model a stream; a model without the Streamer role
// answers in one chunk whose last event carries the response.
func ExampleStream() {
	model := llm.AlwaysText("ready")
	for ev, err := range llm.Stream(context.Background(), model, &llm.Request{}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("delta %q, final: %v\n", ev.TextDelta, ev.Response != nil)
	}
	// Output:
	// delta "ready", final: true
}

// Messages have a durable JSON form; an unknown part kind is a typed error.
func ExampleMessage_MarshalJSON() {
	msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)},
	}}
	data, _ := json.Marshal(msg)
	fmt.Println(string(data))

	var back llm.Message
	err := json.Unmarshal([]byte(`{"role":"assistant","parts":[{"kind":"thinking","text":"hm"}]}`), &back)
	var unknown *llm.UnknownPartError
	fmt.Println(errors.As(err, &unknown), unknown.Kind)
	// Output:
	// {"role":"assistant","parts":[{"kind":"tool_call","id":"call_add","name":"add","arguments":{"left":2,"right":3}}]}
	// true thinking
}
