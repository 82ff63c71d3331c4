package agentspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
	"github.com/weft-run/weft/toolsets"
)

// MetaVersion is the run metadata key under which a registered agent
// records its version (Version) in every run's run.started event.
const MetaVersion = weft.MetaAgentVersion

// Hosted is the agents a File registered on a runtime.
type Hosted struct {
	// Agents are the registered agents, in the file's order.
	Agents  []*weft.Agent
	file    *File
	closers []io.Closer
}

// Agent returns the registered agent named name, or nil.
func (h *Hosted) Agent(name string) *weft.Agent {
	for _, a := range h.Agents {
		if a.Name() == name {
			return a
		}
	}
	return nil
}

// Version returns the version of the registered agent named name (see
// File.AgentVersion), or "" when h has no such agent.
func (h *Hosted) Version(name string) string {
	if a := h.Agent(name); a != nil {
		return a.Version()
	}
	return ""
}

// Close releases what the toolsets hold (MCP sessions, environment
// roots). Call it after the runtime stops running the agents.
func (h *Hosted) Close() error {
	var errs []error
	for _, c := range slices.Backward(h.closers) {
		errs = append(errs, c.Close())
	}
	h.closers = nil
	return errors.Join(errs...)
}

// Register builds every agent of the file and registers it on rt. extra
// adds Go tools to declared agents, by agent name: they join the agent's
// loose tools (AgentConfig.Tools), so approval_required and trusted_tools
// may select them. A name in extra that the file does not declare is an
// error. Remote tools are described by the workers during Register (each
// toolset waits its wait, default 10s, at most; ctx bounds it too).
//
// Every agent is built before any is registered, so an error building
// one (a model, a toolset) registers none; an error of the runtime's
// (weft.Runtime.NewAgent: an approval selector that matches nothing, a
// name already registered) may leave the agents before it registered.
// Every error is an *Error naming the file, line and field.
//
// Each agent records its version (File.AgentVersion) under MetaVersion in the
// metadata of every run it starts.
func (f *File) Register(ctx context.Context, rt *weft.Runtime, extra map[string][]toolsets.Tool) (_ *Hosted, err error) {
	for name := range extra {
		if f.agent(name) < 0 {
			return nil, &Error{File: f.name, Line: f.line("agents"), Field: "agents", Msg: fmt.Sprintf("Go tools are given for agent %q, which the file does not declare", name)}
		}
	}
	h := &Hosted{file: f}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	cfgs, err := f.build(ctx, rt, h, extra, nil)
	if err != nil {
		return nil, err
	}
	order, err := f.agentToolOrder()
	if err != nil {
		return nil, err
	}
	registered := make([]*weft.Agent, len(f.Agents))
	for _, i := range order {
		a := f.Agents[i]
		tools, err := f.agentTools(i, h)
		if err != nil {
			return nil, err
		}
		cfgs[i].Tools = append(cfgs[i].Tools, tools...)
		agent, err := rt.NewAgent(a.Name, cfgs[i])
		if err != nil {
			return nil, f.registerError(i, err)
		}
		registered[i] = agent
		h.Agents = append(h.Agents, agent)
	}
	h.Agents = registered // in the file's order
	return h, nil
}

// build builds the configurations of the file's agents for which only
// says yes (every agent when only is nil), with their versions: each
// records its version under MetaVersion in the runs it starts. What the
// toolsets hold goes to h's closers.
func (f *File) build(ctx context.Context, rt *weft.Runtime, h *Hosted, extra map[string][]toolsets.Tool, only func(name string) bool) ([]weft.AgentConfig, error) {
	b := &builder{f: f, rt: rt, h: h, limiters: map[string]*resilient.Limiter{}}
	cfgs := make([]weft.AgentConfig, len(f.Agents))
	for i, a := range f.Agents {
		if only != nil && !only(a.Name) {
			continue
		}
		cfg, err := b.agent(ctx, i)
		if err != nil {
			return nil, err
		}
		cfg.Tools = append(cfg.Tools, extra[a.Name]...)
		v := f.AgentVersion(a.Name)
		cfg.Version = v
		cfg.OnRunStart = append(cfg.OnRunStart, func(_ context.Context, rs *weft.RunStart) error {
			rs.Metadata[MetaVersion] = v
			return nil
		})
		cfgs[i] = cfg
	}
	return cfgs, nil
}

// policyFields are the spec fields of the runtime's policies, by
// toolsets.SelectorError.Policy.
var policyFields = map[string]string{"approval_policy": "approval_required", "trusted_tools": "trusted_tools"}

// registerError is the runtime's refusal of agent i, at the field it
// names: a selector that matches nothing is at the policy's field
// (approval_required, trusted_tools), anything else at the agent.
func (f *File) registerError(i int, err error) *Error {
	p := fmt.Sprintf("agents[%d]", i)
	line := f.line(p + ".name")
	var se *toolsets.SelectorError
	if errors.As(err, &se) {
		if field, ok := policyFields[se.Policy]; ok {
			if n, ok := f.lines[p+"."+field]; ok {
				p, line = p+"."+field, n
			}
		}
	}
	return &Error{File: f.name, Line: line, Field: p, Msg: "register the agent", Err: err}
}

func (f *File) agent(name string) int {
	return slices.IndexFunc(f.Agents, func(a Agent) bool { return a.Name == name })
}

// builder builds the agents of one Register call; its limiters are
// shared by every model of a provider.
type builder struct {
	f        *File
	rt       *weft.Runtime
	h        *Hosted
	limiters map[string]*resilient.Limiter
}

func (b *builder) agent(ctx context.Context, i int) (weft.AgentConfig, error) {
	a := &b.f.Agents[i]
	p := fmt.Sprintf("agents[%d]", i)
	model, err := b.model(p+".model", a.Model)
	if err != nil {
		return weft.AgentConfig{}, err
	}
	cfg := weft.AgentConfig{
		Model:                 model,
		Instructions:          a.Instructions,
		ApprovalRequiredTools: a.ApprovalRequired,
		TrustedTools:          a.TrustedTools,
		Limits:                a.Limits.usage(),
		MaxRetries:            a.ToolRetries,
		Timeout:               time.Duration(a.ToolTimeout),
		ModelSettings: llm.Settings{Temperature: a.Settings.Temperature, TopP: a.Settings.TopP, MaxTokens: a.Settings.MaxTokens,
			StopSequences: a.Settings.Stop, Seed: a.Settings.Seed},
	}
	for j := range a.Toolsets {
		ts, err := b.toolset(ctx, fmt.Sprintf("%s.toolsets[%d]", p, j), &a.Toolsets[j])
		if err != nil {
			return weft.AgentConfig{}, err
		}
		cfg.Toolsets = append(cfg.Toolsets, ts)
	}
	return cfg, nil
}

func (l Limits) usage() weft.UsageLimits {
	at := func(n *int64) weft.Limit {
		if n == nil {
			return weft.Limit{}
		}
		return weft.AtMost(*n)
	}
	return weft.UsageLimits{Requests: at(l.Requests), ToolCalls: at(l.ToolCalls),
		InputTokens: at(l.InputTokens), OutputTokens: at(l.OutputTokens), TotalTokens: at(l.TotalTokens)}
}

// wrap is an error of another package at the field path p.
func (b *builder) wrap(p, msg string, err error) *Error {
	return &Error{File: b.f.name, Line: b.f.line(p), Field: p, Msg: msg, Err: err}
}
