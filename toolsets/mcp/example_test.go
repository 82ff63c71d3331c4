package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// The seed's McpToolset in deferred mode: the declared tool is offered to
// the model, and a call suspends with the MCP request for the host.
func ExampleNewDeferred() {
	github, err := mcp.NewDeferred(mcp.Config{
		Name:                "github",
		Transport:           mcp.StreamableHTTP("https://example.com/mcp"),
		Headers:             map[string]mcp.Value{"authorization": mcp.Bearer("GITHUB_TOKEN")},
		ToolPrefix:          "github",
		IncludeInstructions: true,
		Instructions:        "Prefer repository-grounded evidence for repository tasks.",
		Tools: []mcp.ToolSpec{{
			Name:        "search",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
			Description: "Search repositories.",
			Annotations: &mcp.Annotations{ReadOnly: mcp.Hint(true)},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(context.Background(), github); err != nil {
		log.Fatal(err)
	}
	fmt.Print(reg.Instructions())
	ret := reg.Call(context.Background(), toolsets.Invocation{CallID: "c1", Name: "github_search", Arguments: json.RawMessage(`{"query":"weft"}`)})
	req, _ := mcp.RequestOf(ret.Control.Metadata)
	fmt.Println(ret.Kind, req.Server, req.Transport, req.Tool, string(req.Arguments))
	// Output:
	// ## mcp:github
	// - Prefer repository-grounded evidence for repository tasks.
	// call_deferred github streamable_http search {"query":"weft"}
}
