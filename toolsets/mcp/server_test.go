package mcp_test

// A small MCP server in Go on the official SDK, for the cases the
// reference servers do not show on demand: a tool that never answers, a
// server that dies in the middle of a call, a tool list that changes, a
// call whose cancellation the server records. The test binary runs it
// when started with envServer=1 (see TestMain); it speaks MCP on stdio.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft/toolsets/mcp"
)

const (
	envServer = "WEFT_MCP_TEST_SERVER"
	// envLog names the file the server appends a line to per event
	// ("call write", "cancelled slow", …).
	envLog = "WEFT_MCP_TEST_LOG"
)

// serverInstructions are the test server's initialize instructions.
const serverInstructions = "Prefer the echo tool for round trips."

func logLine(s string) {
	f, err := os.OpenFile(os.Getenv(envLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, s)
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

type dieArgs struct {
	Die bool `json:"die,omitempty"`
}

type echoArgs struct {
	Text string `json:"text"`
}

func runTestServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "weft-test", Version: "1"}, &sdk.ServerOptions{Instructions: serverInstructions})
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	notDestructive := false
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text.", Annotations: ro}, func(ctx context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
		return text(a.Text), nil, nil
	})
	// write and put append a line per call; with die they kill the server
	// in the middle of the first such call (a marker file remembers it).
	writeLike := func(name string, idempotent bool) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Annotations: &sdk.ToolAnnotations{DestructiveHint: &notDestructive, IdempotentHint: idempotent}},
			func(ctx context.Context, _ *sdk.CallToolRequest, a dieArgs) (*sdk.CallToolResult, any, error) {
				logLine("call " + name)
				marker := os.Getenv(envLog) + ".died"
				if a.Die {
					if _, err := os.Stat(marker); err != nil {
						_ = os.WriteFile(marker, nil, 0o600)
						os.Exit(3)
					}
				}
				return text(name + " done"), nil, nil
			})
	}
	writeLike("write", false)
	writeLike("put", true)
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Annotations: ro}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		logLine("call slow")
		<-ctx.Done()
		logLine("cancelled slow")
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Annotations: ro}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		logLine("call hang")
		select {} // never answers, even when cancelled
	})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Annotations: ro}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		r := text("the disk is full")
		r.IsError = true
		return r, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "progress", Annotations: ro}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			// A tool reports progress while it works: the client's SDK
			// hands notifications over on goroutines of their own, so
			// ones sent at the very end may come after the result (and
			// are then dropped, as the package doc says).
			time.Sleep(10 * time.Millisecond)
		}
		return text("progressed"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Annotations: ro}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		logLine("call ask")
		if a, ok := req.Params.InputResponses["env"].(*sdk.ElicitResult); ok && req.Params.RequestState == "state-7" {
			if a.Action != "accept" {
				return text("not deployed: " + a.Action), nil, nil
			}
			return text(fmt.Sprintf("deploying to %v", a.Content["env"])), nil, nil
		}
		return &sdk.CallToolResult{RequestState: "state-7", InputRequests: sdk.InputRequestMap{"env": &sdk.ElicitParams{Message: "Which environment?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}}}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "danger"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		logLine("call danger")
		return text("boom"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Annotations: &sdk.ToolAnnotations{DestructiveHint: &notDestructive}}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		sdk.AddTool(s, &sdk.Tool{Name: "extra", Annotations: ro}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text("extra"), nil, nil
		})
		return text("added"), nil, nil
	})
	// A server started again after dying offers one more tool, so that
	// tests see the tools listed again after a reconnection.
	if _, err := os.Stat(os.Getenv(envLog) + ".died"); err == nil {
		sdk.AddTool(s, &sdk.Tool{Name: "reborn", Annotations: ro}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text("reborn"), nil, nil
		})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// mcpTestExe is this test binary, which serves MCP with envServer=1.
func mcpTestExe() (string, error) { return os.Executable() }

// goServer is the configuration of the test server (this test binary in
// server mode) and the file it logs to.
func goServer(t *testing.T, name string) (mcp.Config, string) {
	t.Helper()
	exe, err := mcpTestExe()
	if err != nil {
		t.Fatal(err)
	}
	log := t.TempDir() + "/server.log"
	tr := mcp.Stdio(exe).WithEnv(envServer, mcp.Literal("1")).WithEnv(envLog, mcp.Literal(log))
	return mcp.Config{Name: name, Transport: tr}, log
}

// serverLog returns the lines the test server logged.
func serverLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}
