package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// TestSpanTreeMCP: a live MCP call is a "tools/call {tool}" span under
// its execute_tool span, and the server gets its traceparent in _meta.
func TestSpanTreeMCP(t *testing.T) {
	var meta atomic.Value
	meta.Store("")
	server := sdk.NewServer(&sdk.Implementation{Name: "trace-test", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "lookup", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if tp, ok := req.Params.GetMeta()["traceparent"].(string); ok {
				meta.Store(tp)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "found"}}}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	defer srv.Close()
	defer srv.CloseClientConnections()
	ts, err := mcp.New(mcp.Config{Name: "remote", Transport: mcp.StreamableHTTP(srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	rt, _, exp := setup(t, telemetry.Config{})
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "lookup", `{}`)), llm.ScriptText("done"))
	run(t, agent(t, rt, "mcp", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}}).NewSession(), weft.StatusCompleted)
	spans := exp.GetSpans()
	checkGolden(t, "mcp_call", tree(spans))
	var callSpan string
	for _, s := range spans {
		if s.Name == "tools/call lookup" {
			callSpan = s.SpanContext.SpanID().String()
		}
	}
	if got := meta.Load().(string); callSpan == "" || !strings.Contains(got, callSpan) {
		t.Errorf("the server got traceparent %q, want the tools/call span %s", got, callSpan)
	}
}
