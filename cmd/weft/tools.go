package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weft-run/weft/toolsets"
)

// runTools registers the seed's example tools, runs a scripted list of calls
// through the registry, and prints each canonical return as one JSON line
// (or indented with -pretty). It needs no input and no network.
func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tools", "[--pretty]", `
Runs the seed's tool examples through the registry and prints each
canonical tool return as a JSON line.`, stderr)
	pretty := fs.Bool("pretty", false, "indent each return")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("%w: tools takes no arguments, got %q", errUsage, fs.Args())
	}
	reg, err := exampleRegistry(ctx)
	if err != nil {
		return fmt.Errorf("build the example registry: %w", err)
	}
	fmt.Fprintf(stdout, "# tools the model sees:\n%s", reg.Describe(toolsets.Normal))
	fmt.Fprintf(stdout, "# tools that need a person:\n%s", gatedTools(reg))
	fmt.Fprintf(stdout, "# instructions:\n%s", reg.Instructions())
	for i, c := range exampleCalls {
		inv := c.inv
		inv.CallID = fmt.Sprintf("call_%02d", i+1)
		inv.RunID = "tools_run"
		ret := reg.Call(ctx, inv)
		var b []byte
		if *pretty {
			b, err = json.MarshalIndent(ret, "", "  ")
		} else {
			b, err = json.Marshal(ret)
		}
		if err != nil {
			return fmt.Errorf("encode the return of %s: %w", inv.CallID, err)
		}
		fmt.Fprintf(stdout, "# %s\n%s\n", c.title, b)
	}
	return nil
}

// gatedTools lists the tools whose definitions say that their calls wait
// for a person (toolsets.GatingOf), one line each, or "- none".
func gatedTools(reg *toolsets.Registry) string {
	var b strings.Builder
	for _, d := range reg.ModelDefinitions() {
		g := toolsets.GatingOf(d)
		if g.Approval {
			fmt.Fprintf(&b, "- %s: approval required (%s)\n", d.Name, g.ApprovalReason)
		}
		if g.Deferred {
			fmt.Fprintf(&b, "- %s: deferred (%s)\n", d.Name, g.DeferredReason)
		}
	}
	if b.Len() == 0 {
		return "- none\n"
	}
	return b.String()
}

type exampleCall struct {
	title string
	inv   toolsets.Invocation
}

var exampleCalls = []exampleCall{
	{"add two numbers", toolsets.Invocation{Name: "add", Arguments: raw(`{"left":2,"right":3}`)}},
	{"lookup with an optional argument left out", toolsets.Invocation{Name: "lookup", Arguments: raw(`{"ticket_id":"T-7"}`)}},
	{"fetch_ticket with a struct argument", toolsets.Invocation{Name: "fetch_ticket", Arguments: raw(`{"ticket_id":"T-1","include_history":true}`)}},
	{"fetch_ticket with invalid arguments (missing ticket_id, unexpected verbose)", toolsets.Invocation{Name: "fetch_ticket", Arguments: raw(`{"verbose":true}`)}},
	{"inspect_payload with map arguments and an explicit schema", toolsets.Invocation{Name: "inspect_payload", Arguments: raw(`{"b":1,"a":[2]}`)}},
	{"deploy asks for approval", toolsets.Invocation{Name: "deploy", Arguments: raw(`{}`)}},
	{"deploy resumed with an approval", toolsets.Invocation{Name: "deploy", Arguments: raw(`{}`), Approval: &toolsets.Approval{DecidedBy: "cli"}}},
	{"delete_file waits: the files toolset requires approval for its bundle \"destructive\"", toolsets.Invocation{Name: "delete_file", Arguments: raw(`{"path":"old.log"}`)}},
	{"append_audit_line (sequential)", toolsets.Invocation{Name: "append_audit_line", Arguments: raw(`{"line":"deployed"}`)}},
	{"inspect_release structured result", toolsets.Invocation{Name: "inspect_release"}},
	{"fetch_status with metadata, timeout and max retries", toolsets.Invocation{Name: "fetch_status", Arguments: raw(`{"url":"https://status.example"}`)}},
	{"read_file gives feedback", toolsets.Invocation{Name: "read_file", Arguments: raw(`{"path":"notes.txt"}`)}},
	{"flaky_ping recovers on its third attempt", toolsets.Invocation{Name: "flaky_ping"}},
	{"function toolset: lookup_value with the tool context", toolsets.Invocation{Name: "lookup_value", Arguments: raw(`{"value":"x"}`)}},
	{"function toolset: mode (plain)", toolsets.Invocation{Name: "mode"}},
	{"an unknown tool", toolsets.Invocation{Name: "launch_rockets"}},
	{"the model calls a hidden tool", toolsets.Invocation{Name: "load_calendar_adapter"}},
	{"the application calls the same hidden tool", toolsets.Invocation{Name: "load_calendar_adapter", Caller: toolsets.CallerApplication}},
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// exampleRegistry builds the seed's example tools.
func exampleRegistry(ctx context.Context) (*toolsets.Registry, error) {
	type AddArgs struct {
		Left  int `json:"left" jsonschema:"left operand"`
		Right int `json:"right" jsonschema:"right operand"`
	}
	type LookupArgs struct {
		TicketID       string `json:"ticket_id"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	type TicketArgs struct {
		TicketID       string `json:"ticket_id" jsonschema:"the ticket to fetch"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	type LineArgs struct {
		Line string `json:"line"`
	}
	type StatusArgs struct {
		URL string `json:"url"`
	}
	type PathArgs struct {
		Path string `json:"path"`
	}
	type ValueArgs struct {
		Value string `json:"value"`
	}
	noProps := toolsets.WithSchema(`{"type":"object","properties":{}}`)
	var errs []error
	tool := func(t toolsets.Tool, err error) toolsets.Tool {
		errs = append(errs, err)
		return t
	}
	flaky := 0
	tools := []toolsets.Tool{
		tool(toolsets.NewFunc("add", func(_ context.Context, a AddArgs) (map[string]int, error) {
			return map[string]int{"total": a.Left + a.Right}, nil
		}, toolsets.WithDescription("Add two integers."))),
		tool(toolsets.NewFunc("lookup", func(_ context.Context, a LookupArgs) (map[string]any, error) {
			return map[string]any{"ticket_id": a.TicketID, "include_history": a.IncludeHistory}, nil
		}, toolsets.WithDescription("Look up a ticket."))),
		tool(toolsets.NewFunc("fetch_ticket", func(_ context.Context, a TicketArgs) (TicketArgs, error) {
			return a, nil
		}, toolsets.WithDescription("Fetch a support ticket."))),
		tool(toolsets.NewFunc("inspect_payload", func(_ context.Context, args map[string]any) (map[string]any, error) {
			keys := make([]string, 0, len(args))
			for k := range args {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return map[string]any{"keys": keys}, nil
		}, toolsets.WithSchema(map[string]any{"type": "object", "additionalProperties": true}), toolsets.WithDescription("List the keys of a payload."))),
		tool(toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, _ map[string]any) (map[string]bool, error) {
			if tc.Approval == nil {
				return nil, toolsets.ApprovalRequired("deploy production", map[string]any{"risk": "high"})
			}
			return map[string]bool{"approved": true, "ok": !tc.IsCancelled()}, nil
		}, noProps, toolsets.WithDescription("Deploy the current release."))),
		tool(toolsets.NewFunc("append_audit_line", func(context.Context, LineArgs) (map[string]bool, error) {
			return map[string]bool{"written": true}, nil
		}, toolsets.WithSequential(true), toolsets.WithDescription("Append a line to the audit log."))),
		tool(toolsets.NewFunc("inspect_release", func(context.Context, map[string]any) (toolsets.Result, error) {
			return toolsets.Result{
				Content:         map[string]any{"raw": "application record"},
				Metadata:        map[string]any{"audit": "release"},
				AppValue:        map[string]any{"release_id": 42},
				ModelContent:    map[string]any{"summary": "release is ready"},
				UserContent:     map[string]any{"markdown": "**Ready**"},
				PrivateMetadata: map[string]any{"trace_id": "host-only"},
			}, nil
		}, noProps, toolsets.WithDescription("Inspect the release."))),
		tool(toolsets.NewFunc("fetch_status", func(_ context.Context, a StatusArgs) (map[string]string, error) {
			return map[string]string{"status": "ok", "url": a.URL}, nil
		}, toolsets.WithMetadata(map[string]any{"risk": "network"}), toolsets.WithTimeout(5*time.Second), toolsets.WithMaxRetries(1),
			toolsets.WithDescription("Fetch a status page."))),
		tool(toolsets.NewFunc("read_file", func(_ context.Context, a PathArgs) (string, error) {
			return "", toolsets.Feedback(a.Path + " does not exist; list the directory first.")
		}, toolsets.WithDescription("Read a file."))),
		tool(toolsets.NewFunc("flaky_ping", func(context.Context, struct{}) (string, error) {
			if flaky++; flaky < 3 {
				return "", errors.New("connection reset")
			}
			return "pong", nil
		}, toolsets.WithDescription("Ping a flaky service."))),
		tool(toolsets.NewFunc("load_calendar_adapter", func(context.Context, struct{}) (string, error) {
			return "adapter loaded", nil
		}, toolsets.WithVisibility(toolsets.Hidden), toolsets.WithDescription("Load an internal adapter."))),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(tools...); err != nil {
		return nil, err
	}
	functions, err := toolsets.NewFunction("functions",
		toolsets.WithID("functions"),
		toolsets.WithInstructions("Return concise lookup results."),
		toolsets.WithMaxRetries(2),
		toolsets.WithTimeout(30*time.Second),
		toolsets.WithMetadata(map[string]any{"source": "functions"}),
	)
	if err != nil {
		return nil, err
	}
	if err := toolsets.Add(functions, "lookup_value", func(_ context.Context, tc *toolsets.ToolContext, a ValueArgs) (map[string]string, error) {
		return map[string]string{"value": a.Value, "run_id": tc.RunID}, nil
	}, toolsets.WithDescription("Look up a value.")); err != nil {
		return nil, err
	}
	if err := toolsets.AddPlain(functions, "mode", func(context.Context, struct{}) (string, error) {
		return "review", nil
	}, toolsets.WithDescription("Report the current mode.")); err != nil {
		return nil, err
	}
	if err := reg.AddToolset(ctx, functions); err != nil {
		return nil, err
	}
	// A toolset wrapper gates by bundle: the definition shows it.
	deleteFile, err := toolsets.NewFunc("delete_file", func(_ context.Context, a PathArgs) (map[string]string, error) {
		return map[string]string{"deleted": a.Path}, nil
	}, toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: "destructive"}), toolsets.WithDescription("Delete a file."))
	if err != nil {
		return nil, err
	}
	files, err := toolsets.New("files", []toolsets.Tool{deleteFile}, toolsets.WithID("files"))
	if err != nil {
		return nil, err
	}
	gated, err := toolsets.RequireApproval(files, []string{"destructive"}, "deleting needs a person")
	if err != nil {
		return nil, err
	}
	if err := reg.AddToolset(ctx, gated); err != nil {
		return nil, err
	}
	return reg, nil
}
