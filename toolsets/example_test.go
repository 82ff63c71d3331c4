package toolsets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/weft-run/weft/toolsets"
)

// call registers tools in a fresh registry, calls name with args as the
// model would, and prints the canonical return's kind and model content.
func call(name, args string, tools ...toolsets.Tool) {
	reg := toolsets.NewRegistry()
	if err := reg.Register(tools...); err != nil {
		fmt.Println(err)
		return
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{CallID: "call_1", Name: name, Arguments: json.RawMessage(args)})
	fmt.Println(ret.Kind, string(ret.ModelContent()))
}

func must(t toolsets.Tool, err error) toolsets.Tool {
	if err != nil {
		panic(err)
	}
	return t
}

func ExampleNewFunc() {
	type AddArgs struct {
		Left  int `json:"left"`
		Right int `json:"right"`
	}
	add, err := toolsets.NewFunc("add", func(_ context.Context, a AddArgs) (map[string]int, error) {
		return map[string]int{"total": a.Left + a.Right}, nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(add.Definition().Parameters))
	call("add", `{"left": 2, "right": 3}`, add)
	// Output:
	// {"type":"object","properties":{"left":{"type":"integer"},"right":{"type":"integer"}},"required":["left","right"],"additionalProperties":false}
	// success {"total":5}
}

// Optional arguments are fields tagged omitempty.
func ExampleNewFunc_lookup() {
	type LookupArgs struct {
		TicketID       string `json:"ticket_id"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	lookup := must(toolsets.NewFunc("lookup", func(_ context.Context, a LookupArgs) (map[string]any, error) {
		return map[string]any{"ticket_id": a.TicketID, "include_history": a.IncludeHistory}, nil
	}))
	call("lookup", `{"ticket_id": "T-7"}`, lookup)
	// Output:
	// success {"include_history":false,"ticket_id":"T-7"}
}

// One argument struct keeps validation in one place; descriptions come
// from the jsonschema tag.
func ExampleNewFunc_fetchTicket() {
	type TicketArgs struct {
		TicketID       string `json:"ticket_id" jsonschema:"the ticket to fetch"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	fetch := must(toolsets.NewFunc("fetch_ticket", func(_ context.Context, a TicketArgs) (TicketArgs, error) {
		return a, nil
	}, toolsets.WithDescription("Fetch a support ticket.")))
	call("fetch_ticket", `{"ticket_id": "T-1", "include_history": true}`, fetch)
	call("fetch_ticket", `{"include_history": true}`, fetch)
	// Output:
	// success {"ticket_id":"T-1","include_history":true}
	// invalid_arguments "missing required argument \"ticket_id\". Call the tool again with \"ticket_id\" set to a string (the ticket to fetch)."
}

// A dynamic shape takes map arguments and an explicit schema.
func ExampleWithSchema() {
	inspect := must(toolsets.NewFunc("inspect_payload", func(_ context.Context, args map[string]any) (map[string]any, error) {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return map[string]any{"keys": keys}, nil
	}, toolsets.WithSchema(map[string]any{"type": "object", "additionalProperties": true})))
	call("inspect_payload", `{"b": 1, "a": [2]}`, inspect)

	_, err := toolsets.NewFunc("bad", func(context.Context, map[string]any) (int, error) { return 0, nil },
		toolsets.WithSchema(map[string]any{"type": "array"}))
	fmt.Println(err)
	// Output:
	// success {"keys":["a","b"]}
	// tool "bad": parameters schema rejected (not_object): top-level "type" is "array", want "object"
}

// A tool that needs runtime state takes the ToolContext.
func ExampleNewContextFunc() {
	deploy := must(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, _ map[string]any) (map[string]bool, error) {
		return map[string]bool{"ok": !tc.IsCancelled()}, nil
	}, toolsets.WithSchema(`{"type": "object", "properties": {}}`)))
	call("deploy", `{}`, deploy)
	// Output:
	// success {"ok":true}
}

// DeployTool is a class tool: any type implementing toolsets.Tool.
type DeployTool struct{}

func (DeployTool) Definition() toolsets.Definition {
	return toolsets.Definition{
		Name:        "deploy",
		Description: "Deploy the current release.",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`),
	}
}

func (DeployTool) Call(_ context.Context, tc *toolsets.ToolContext, _ json.RawMessage) (any, error) {
	return map[string]bool{"ok": !tc.IsCancelled()}, nil
}

func ExampleTool() {
	call("deploy", `{}`, DeployTool{})
	call("deploy", `{"force": true}`, DeployTool{})
	// Output:
	// success {"ok":true}
	// invalid_arguments "unexpected argument \"force\". Remove \"force\"; this tool takes no arguments."
}

func ExampleWithSequential() {
	type Line struct {
		Line string `json:"line"`
	}
	audit := must(toolsets.NewFunc("append_audit_line", func(context.Context, Line) (map[string]bool, error) {
		return map[string]bool{"written": true}, nil
	}, toolsets.WithSequential(true)))
	fmt.Println(audit.Definition().Sequential)
	call("append_audit_line", `{"line": "deployed"}`, audit)
	// Output:
	// true
	// success {"written":true}
}

// A Result separates what the model, the application and the UI see.
func ExampleResult() {
	inspect := must(toolsets.NewFunc("inspect_release", func(context.Context, map[string]any) (toolsets.Result, error) {
		return toolsets.Result{
			Content:         map[string]any{"raw": "application record"},
			Metadata:        map[string]any{"audit": "release"},
			AppValue:        map[string]any{"release_id": 42},
			ModelContent:    map[string]any{"summary": "release is ready"},
			UserContent:     map[string]any{"markdown": "**Ready**"},
			PrivateMetadata: map[string]any{"trace_id": "host-only"},
		}, nil
	}, toolsets.WithSchema(`{"type": "object", "properties": {}}`)))
	reg := toolsets.NewRegistry()
	if err := reg.Register(inspect); err != nil {
		panic(err)
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "inspect_release"})
	fmt.Println("model:", string(ret.ModelContent()))
	fmt.Println("app:", string(ret.AppValue), "user:", string(ret.UserContent))
	fmt.Println("metadata:", ret.Metadata, "private:", ret.PrivateMetadata)
	// Output:
	// model: {"summary":"release is ready"}
	// app: {"release_id":42} user: {"markdown":"**Ready**"}
	// metadata: map[audit:release] private: map[trace_id:host-only]
}

func ExampleWithTimeout() {
	type StatusArgs struct {
		URL string `json:"url"`
	}
	fetch := must(toolsets.NewFunc("fetch_status", func(_ context.Context, a StatusArgs) (map[string]string, error) {
		return map[string]string{"status": "ok", "url": a.URL}, nil
	},
		toolsets.WithMetadata(map[string]any{"risk": "network"}),
		toolsets.WithTimeout(5*time.Second),
		toolsets.WithMaxRetries(1),
	))
	d := fetch.Definition()
	fmt.Println(d.Metadata, d.Timeout, *d.MaxRetries)
	reg := toolsets.NewRegistry()
	if err := reg.Register(fetch); err != nil {
		panic(err)
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "fetch_status", Arguments: json.RawMessage(`{"url":"https://example.com"}`)})
	fmt.Println(ret.Kind, string(ret.Content), ret.Attempts, ret.MaxAttempts)
	// Output:
	// map[risk:network] 5s 1
	// success {"status":"ok","url":"https://example.com"} 1 2
}

func ExampleNewFunction() {
	functions, err := toolsets.NewFunction("functions",
		toolsets.WithID("functions"),
		toolsets.WithInstructions("Return concise lookup results."),
		toolsets.WithMaxRetries(2),
		toolsets.WithTimeout(30*time.Second),
		toolsets.WithMetadata(map[string]any{"source": "functions"}),
	)
	if err != nil {
		panic(err)
	}
	type LookupArgs struct {
		Value string `json:"value"`
	}
	err = toolsets.Add(functions, "lookup", func(_ context.Context, tc *toolsets.ToolContext, a LookupArgs) (map[string]string, error) {
		return map[string]string{"value": a.Value, "run_id": tc.RunID}, nil
	})
	if err != nil {
		panic(err)
	}
	err = toolsets.AddPlain(functions, "mode", func(context.Context, struct{}) (string, error) { return "review", nil })
	if err != nil {
		panic(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(context.Background(), functions); err != nil {
		panic(err)
	}
	for _, d := range reg.ModelDefinitions() {
		fmt.Println(d.Name, d.Metadata)
	}
	fmt.Print(reg.Instructions())
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "lookup", RunID: "run_1", Arguments: json.RawMessage(`{"value":"x"}`)})
	fmt.Println(ret.Kind, string(ret.Content))
	ret = reg.Call(context.Background(), toolsets.Invocation{Name: "mode"})
	fmt.Println(ret.Kind, string(ret.Content))
	// Output:
	// lookup map[source:functions]
	// mode map[source:functions]
	// ## functions
	// - Return concise lookup results.
	// success {"run_id":"run_1","value":"x"}
	// success "review"
}

func ExampleNew() {
	type LookupArgs struct {
		Value string `json:"value"`
	}
	lookup := must(toolsets.NewFunc("lookup", func(_ context.Context, a LookupArgs) (map[string]string, error) {
		return map[string]string{"value": a.Value}, nil
	}))
	workspace, err := toolsets.New("workspace", []toolsets.Tool{lookup},
		toolsets.WithInstructions("Prefer exact local facts over assumptions."))
	if err != nil {
		panic(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(context.Background(), workspace); err != nil {
		panic(err)
	}
	fmt.Print(reg.Instructions())
	fmt.Print(reg.Describe(toolsets.Normal))
	// Output:
	// ## workspace
	// - Prefer exact local facts over assumptions.
	// - lookup(value: string)
}

// A tool asks for approval, and runs when resumed with one.
func ExampleApprovalRequired() {
	deploy := must(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, _ map[string]any) (map[string]bool, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("deploy production", map[string]any{"risk": "high"})
		}
		return map[string]bool{"approved": true}, nil
	}, toolsets.WithSchema(`{"type": "object", "properties": {}}`)))
	reg := toolsets.NewRegistry()
	if err := reg.Register(deploy); err != nil {
		panic(err)
	}
	waiting := reg.Call(context.Background(), toolsets.Invocation{CallID: "call_deploy", Name: "deploy"})
	fmt.Println(waiting.Kind, waiting.Control.Reason, waiting.Control.Metadata)
	resumed := reg.Call(context.Background(), toolsets.Invocation{CallID: "call_deploy", Name: "deploy", Approval: &toolsets.Approval{DecidedBy: "ui"}})
	fmt.Println(resumed.Kind, string(resumed.Content))
	// Output:
	// approval_required deploy production map[risk:high]
	// success {"approved":true}
}

func ExampleFeedback() {
	type ReadArgs struct {
		Path string `json:"path"`
	}
	read := must(toolsets.NewFunc("read_file", func(_ context.Context, a ReadArgs) (string, error) {
		return "", toolsets.Feedback(a.Path + " does not exist; list the directory first.")
	}))
	reg := toolsets.NewRegistry()
	if err := reg.Register(read); err != nil {
		panic(err)
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "read_file", Arguments: json.RawMessage(`{"path":"notes.txt"}`)})
	fmt.Println(ret.Kind, ret.Success, ret.IsError, string(ret.ModelContent()))
	// Output:
	// feedback false false "notes.txt does not exist; list the directory first."
}

// A tool asks the model to retry only the first time: ModelRetries is how
// many times the model was asked to retry it in this run (the runtime
// fills it from the run's events; here the invocation sets it).
func ExampleToolContext_modelRetries() {
	deploy := must(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (string, error) {
		if tc.ModelRetries == 0 {
			return "", toolsets.ModelRetry("read the release notes before deploying")
		}
		return fmt.Sprintf("deployed (attempt %d of %d)", tc.Attempt, tc.MaxAttempts), nil
	}))
	reg := toolsets.NewRegistry()
	if err := reg.Register(deploy); err != nil {
		panic(err)
	}
	for retries := range 2 {
		ret := reg.Call(context.Background(), toolsets.Invocation{Name: "deploy", ModelRetries: retries})
		fmt.Println(ret.Kind, string(ret.ModelContent()))
	}
	// Output:
	// model_retry "read the release notes before deploying Follow the message and call the tool again."
	// success "deployed (attempt 1 of 3)"
}

// A failed Result shows its payload to the model, is an execution return,
// and is not retried.
func ExampleResult_failed() {
	build := must(toolsets.NewFunc("build", func(context.Context, struct{}) (toolsets.Result, error) {
		return toolsets.Result{Content: map[string]any{"exit": 2, "stderr": "main.go:3: undefined: x"}, Failed: true}, nil
	}))
	reg := toolsets.NewRegistry()
	if err := reg.Register(build); err != nil {
		panic(err)
	}
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "build"})
	fmt.Println(ret.Kind, ret.IsError, ret.Attempts, string(ret.ModelContent()))
	// Output:
	// execution true 1 {"exit":2,"stderr":"main.go:3: undefined: x"}
}
