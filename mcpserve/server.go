package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/toolsets"
)

// ErrConfig is matched by every error of New about its configuration.
var ErrConfig = errors.New("mcpserve: invalid configuration")

// DefaultName is the server's (and its agent's) name when Config.Name is
// empty.
const DefaultName = "weft"

// Config configures a Server.
type Config struct {
	// Name names the server to its clients and is the name of the weft
	// agent its calls run as (DefaultName when empty); Version is the
	// version it gives them.
	Name, Version string
	// Agent holds the tools and toolsets the server offers and the
	// approval policy, retries and timeouts that apply to them, as for any
	// agent. Its Model must be nil: the server's calls are driven by the
	// MCP client. Toolsets must be listable without preparing them for a
	// run (toolsets.KnownTools): static and function toolsets are.
	Agent weft.AgentConfig
	// Logger receives the MCP SDK's log of sessions and requests (nil:
	// none).
	Logger *slog.Logger
}

// Server serves the tools of one weft agent over MCP.
type Server struct {
	rt     *weft.Runtime
	agent  *weft.Agent
	mcp    *mcp.Server
	log    *slog.Logger
	listed []toolsets.Definition

	mu sync.Mutex
	// pending holds the calls waiting for a decision, by callKey.
	pending map[callKey]waitingCall
}

// New returns a Server for the tools of cfg.Agent, running their calls on
// rt. It registers the agent cfg.Name on rt.
func New(rt *weft.Runtime, cfg Config) (*Server, error) {
	if rt == nil {
		return nil, fmt.Errorf("%w: no runtime", ErrConfig)
	}
	if cfg.Agent.Model != nil {
		return nil, fmt.Errorf("%w: Agent.Model must be nil: the MCP client drives the calls", ErrConfig)
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	targets, err := listTargets(cfg.Agent)
	if err != nil {
		return nil, err
	}
	gated, err := gate(cfg.Agent.ApprovalRequiredTools)
	if err != nil {
		return nil, err
	}
	acfg := cfg.Agent
	acfg.Model = callModel{}
	agent, err := rt.NewAgent(cfg.Name, acfg)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: %w", err)
	}
	s := &Server{rt: rt, agent: agent, log: cfg.Logger, pending: map[callKey]waitingCall{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{Logger: cfg.Logger})
	for _, t := range targets {
		d := t.Definition
		if d.Visibility == toolsets.Hidden {
			continue // callable by application code only, never by a client
		}
		tool, err := mcpTool(d, gated(t))
		if err != nil {
			return nil, err
		}
		s.mcp.AddTool(tool, s.handle)
		s.listed = append(s.listed, d)
	}
	return s, nil
}

// MCP returns the SDK server, to connect it to another transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Agent returns the weft agent the calls run as.
func (s *Server) Agent() *weft.Agent { return s.agent }

// ServeStdio serves one client on the process's standard input and output
// until the client disconnects or ctx ends. Nothing else may write to
// standard output meanwhile.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

// listTargets returns every tool of a, with the toolsets that hold it.
func listTargets(a weft.AgentConfig) ([]toolsets.Target, error) {
	out := toolsets.Targets(a.Tools, nil)
	for _, ts := range a.Toolsets {
		if ts == nil {
			return nil, fmt.Errorf("%w: a nil toolset", ErrConfig)
		}
		tools, ok, err := toolsets.KnownTools(ts)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w: toolset %q: %v", ErrConfig, ts.Info().Name, err)
		case !ok:
			return nil, fmt.Errorf("%w: toolset %q lists its tools only when prepared for a run; the MCP server lists its tools when it starts", ErrConfig, ts.Info().Name)
		}
		out = append(out, toolsets.Targets(tools, toolsets.Identities(ts))...)
	}
	return out, nil
}

// gate returns whether the approval policy (or the tool's own gate
// metadata) makes a tool's calls wait for a person.
func gate(policy []string) (func(toolsets.Target) bool, error) {
	sel, err := toolsets.NewSelector(policy)
	if err != nil {
		return nil, fmt.Errorf("%w: approval policy: %v", ErrConfig, err)
	}
	return func(t toolsets.Target) bool {
		if toolsets.GatingOf(t.Definition).Approval {
			return true
		}
		_, ok := sel.Match(t)
		return ok
	}, nil
}

// mcpTool is the MCP description of a weft tool: its schema as given
// (weft's registry validates the arguments), and annotations inferred
// from its flags (see the package doc).
func mcpTool(d toolsets.Definition, gated bool) (*mcp.Tool, error) {
	schema := d.Parameters
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(schema, &probe); err != nil || probe.Type != "object" {
		return nil, fmt.Errorf("%w: tool %q: its parameters are not an object schema", ErrConfig, d.Name)
	}
	ann := &mcp.ToolAnnotations{IdempotentHint: d.ConcurrentSafe}
	if ro, _ := d.Metadata["read_only"].(bool); ro {
		ann.ReadOnlyHint = true
	}
	if gated {
		ann.DestructiveHint = new(true)
	}
	if title, _ := d.Metadata["title"].(string); title != "" {
		ann.Title = title
	}
	return &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: schema, Annotations: ann}, nil
}
