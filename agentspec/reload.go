package agentspec

import (
	"context"
	"errors"
	"slices"

	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/toolsets"
)

// Reload hosts f, a new version of the file prev was registered from, on
// rt in place of prev, without stopping a run: it builds every added and
// changed agent (Compare) first, and registers them only when all of them
// built, as new versions of their names (new runs start with them; the
// runs under way go on with the versions they started with, which stay
// registered); then it retires the removed agents (each checked first: one
// that is not registered, or already retired, is an error before anything
// is registered). When anything fails, nothing changes: the new versions
// registered before the failure are withdrawn, and the error is an *Error
// naming the file, the line and the field. It returns the agents now
// hosted (the unchanged ones are prev's) and what changed. prev stays open
// for the runs of the earlier versions: close both when the runtime stops.
func (f *File) Reload(ctx context.Context, rt *weft.Runtime, prev *Hosted, extra map[string][]toolsets.Tool) (_ *Hosted, _ Changes, err error) {
	if prev == nil || prev.file == nil {
		return nil, Changes{}, errors.New("agentspec: Reload needs the Hosted of a Register")
	}
	for name := range extra {
		if f.agent(name) < 0 {
			return nil, Changes{}, &Error{File: f.name, Line: f.line("agents"), Field: "agents", Msg: "Go tools are given for agent " + name + ", which the file does not declare"}
		}
	}
	ch := Compare(prev.file, f)
	// Every removed agent is checked before anything is registered: a
	// retire that failed after the first one would leave it retired.
	for _, name := range ch.Removed {
		if _, ok := rt.AgentVersion(name); !ok {
			return nil, ch, &Error{File: f.name, Line: f.line("agents"), Field: "agents", Msg: "agent " + name + ", removed, cannot be retired: it is not registered on the runtime, or already retired"}
		}
	}
	build := append(slices.Clone(ch.Added), ch.Changed...)
	h := &Hosted{file: f}
	var registered []*weft.Agent
	defer func() {
		if err != nil {
			for _, a := range registered {
				_ = rt.WithdrawAgent(a.Name(), a.Version())
			}
			h.Close()
		}
	}()
	cfgs, err := f.build(ctx, rt, h, extra, func(name string) bool { return slices.Contains(build, name) })
	if err != nil {
		return nil, ch, err
	}
	// In agent-tool order (agenttools.go): the agents an agent calls as
	// tools are hosted before it is built with them.
	order, err := f.agentToolOrder()
	if err != nil {
		return nil, ch, err
	}
	hosted := make([]*weft.Agent, len(f.Agents))
	for _, i := range order {
		a := f.Agents[i]
		if !slices.Contains(build, a.Name) {
			hosted[i] = prev.Agent(a.Name)
			h.Agents = append(h.Agents, hosted[i])
			continue
		}
		tools, err := f.agentTools(i, h)
		if err != nil {
			return nil, ch, err
		}
		cfgs[i].Tools = append(cfgs[i].Tools, tools...)
		agent, err := rt.NewAgentVersion(a.Name, cfgs[i])
		if err != nil {
			return nil, ch, f.registerError(i, err)
		}
		registered = append(registered, agent)
		hosted[i] = agent
		h.Agents = append(h.Agents, agent)
	}
	h.Agents = hosted // in the file's order
	for _, name := range ch.Removed {
		if err := rt.RetireAgent(name); err != nil {
			return nil, ch, &Error{File: f.name, Field: "agents", Msg: "retire agent " + name, Err: err}
		}
	}
	return h, ch, nil
}
