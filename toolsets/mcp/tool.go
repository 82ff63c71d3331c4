package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-run/weft/toolsets"
)

// tool is one MCP tool as weft exposes it, in deferred or live mode.
type tool struct {
	def    toolsets.Definition
	pol    policy
	server string
	kind   TransportKind
	remote string // the name on the server
	// run performs the call once the approval gate let it through.
	run func(ctx context.Context, t *tool, tc *toolsets.ToolContext, args json.RawMessage) (any, error)
}

var _ toolsets.Tool = (*tool)(nil)

func (t *tool) Definition() toolsets.Definition { return t.def.Clone() }

// Call asks for approval first when the tool's policy says so, through
// the runtime's ordinary approval flow, then runs the call.
func (t *tool) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	if t.pol.approval && tc.Approval == nil {
		return nil, toolsets.ApprovalRequired(t.pol.reason, map[string]any{MetaServer: t.server, MetaTool: t.remote})
	}
	return t.run(ctx, t, tc, args)
}

// exposedName is the weft name of remote under prefix: characters a weft
// name does not allow become '_'.
func exposedName(prefix, remote string) string {
	var b strings.Builder
	if prefix != "" {
		b.WriteString(prefix + "_")
	}
	for i := 0; i < len(remote); i++ {
		ch := remote[i]
		if ch == '_' || ch == '-' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' {
			b.WriteByte(ch)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// anyObject is the schema of a declared tool without parameters.
var anyObject = json.RawMessage(`{"type":"object"}`)

// newTool builds the tool remote of server c, from its description,
// schema, annotation sources and declaration, and checks it as the
// registry will.
func newTool(c *Config, remote, description string, params json.RawMessage, sources []*Annotations, spec ToolSpec,
	run func(context.Context, *tool, *toolsets.ToolContext, json.RawMessage) (any, error)) (*tool, error) {
	if len(params) == 0 {
		params = anyObject
	}
	meta := map[string]any{}
	for k, v := range spec.Metadata {
		meta[k] = v
	}
	meta[MetaServer], meta[MetaTransport], meta[MetaTool] = c.Name, string(c.Transport.Kind), remote
	def := toolsets.Definition{Name: exposedName(c.ToolPrefix, remote), Description: description, Parameters: params, Metadata: meta, Timeout: spec.Timeout}
	if spec.Description != "" {
		def.Description = spec.Description
	}
	h := combine(append([]*Annotations{spec.Annotations}, sources...)...)
	pol := decide(c, h, spec, remote)
	def = pol.apply(def)
	t := &tool{def: def, pol: pol, server: c.Name, kind: c.Transport.Kind, remote: remote, run: run}
	// toolsets.New checks the definition and compiles its schema.
	if _, err := toolsets.New(c.Name, []toolsets.Tool{t}); err != nil {
		return nil, fmt.Errorf("MCP tool %q: %w", remote, err)
	}
	return t, nil
}
