package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// MetaRequest is the deferred metadata key that holds the MCP request of
// a deferred call (a [Request]).
const MetaRequest = "mcp_request"

// Request is the MCP request a deferred call carries for the host to
// perform: which server, over which kind of transport, which tool with
// which arguments. It never holds a header, an environment value or a URL.
type Request struct {
	Server    string          `json:"server"`
	Transport TransportKind   `json:"transport"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// RequestOf decodes the MCP request from a pending deferred item's
// metadata (weft.PendingItem.Metadata).
func RequestOf(metadata map[string]any) (Request, bool) {
	v, ok := metadata[MetaRequest]
	if !ok {
		return Request{}, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Request{}, false
	}
	var r Request
	if json.Unmarshal(b, &r) != nil || r.Server == "" || r.Tool == "" {
		return Request{}, false
	}
	return r, true
}

// NewDeferred builds the seed's deferred MCP toolset: the declared tools
// of c appear in the model's tool list, and a call suspends the run with
// a deferred request ([toolsets.CallDeferred]) whose metadata holds the
// [Request] under [MetaRequest]. weft.Complete supplies the call's result
// (its value becomes the return content), weft.Fail fails it. Tools that
// need approval (see the package documentation) ask for it first. Nothing
// connects to the server.
func NewDeferred(c Config) (toolsets.Toolset, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if len(c.Tools) == 0 {
		return nil, &ConfigError{Server: c.Name, Field: "Tools", Reason: "deferred mode needs declared tools"}
	}
	cfg := c
	tools := make([]toolsets.Tool, 0, len(c.Tools))
	for _, s := range c.Tools {
		t, err := newTool(&cfg, s.Name, s.Description, s.Parameters, nil, s, deferredCall)
		if err != nil {
			return nil, err
		}
		t.def = toolsets.MarkDeferred(t.def, deferReason(&cfg))
		tools = append(tools, t)
	}
	opts := []toolsets.Option{}
	if c.ID != "" {
		opts = append(opts, toolsets.WithID(c.ID))
	}
	if c.Timeout > 0 {
		opts = append(opts, toolsets.WithTimeout(c.Timeout))
	}
	ts, err := toolsets.New(c.Name, tools, opts...)
	if err != nil {
		return nil, err
	}
	var out toolsets.Toolset = ts
	if c.IncludeInstructions && c.Instructions != "" {
		out = withInstructions(ts, []toolsets.Instruction{{Group: c.group(), Text: c.Instructions}})
	}
	if c.Lifecycle != (toolsets.LifecyclePolicy{}) {
		return toolsets.WithLifecycle(out, c.Lifecycle)
	}
	return out, nil
}

func deferReason(c *Config) string {
	return fmt.Sprintf("MCP tool call to server %q, completed by the host", c.Name)
}

func deferredCall(_ context.Context, t *tool, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	if tc.Deferred == nil {
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		req := Request{Server: t.server, Transport: t.kind, Tool: t.remote, Arguments: args}
		return nil, toolsets.CallDeferred(fmt.Sprintf("MCP tool call to server %q, completed by the host", t.server),
			map[string]any{MetaRequest: req, MetaServer: t.server, MetaTool: t.remote})
	}
	res := toolsets.Result{Metadata: tc.Deferred.Metadata}
	if len(tc.Deferred.Value) > 0 {
		res.Content = tc.Deferred.Value
	}
	return res, nil
}

// instructed adds fixed instructions (under their own group) to a
// toolset's preparation.
type instructed struct {
	toolsets.Toolset
	lines []toolsets.Instruction
}

func withInstructions(ts toolsets.Toolset, lines []toolsets.Instruction) toolsets.Toolset {
	return &instructed{Toolset: ts, lines: lines}
}

func (w *instructed) Prepare(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p, err := w.Toolset.Prepare(ctx, tc)
	if err != nil {
		return p, err
	}
	p.Instructions = append(p.Instructions, w.lines...)
	return p, nil
}
