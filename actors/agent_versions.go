package actors

import (
	"fmt"
	"slices"

	"github.com/weft-run/weft/toolsets"
)

// MetaAgentVersion is the run metadata key of the agent version a run
// started with (AgentSpec.Version), recorded in its run.started.
const MetaAgentVersion = "agent_version"

// agentVersions are the registered versions of one agent name.
type agentVersions struct {
	versions map[string]*AgentSpec // by AgentSpec.Version ("" for an unversioned agent)
	order    []string              // the versions in registration order, the latest last
	// retired: the agent was removed; no new run starts, the runs under
	// way go on with their versions.
	retired bool
}

// latest is the version new runs start with: the last registered.
func (av *agentVersions) latest() *AgentSpec { return av.versions[av.order[len(av.order)-1]] }

// Register makes spec available to runs by its name. A name can be
// registered once; AddVersion adds versions of it.
func (h *Host) Register(spec *AgentSpec) error { return h.register(spec, false) }

// AddVersion registers spec as a new version of its name (a reload), or
// as a new name: the new version is the one new runs start with, and the
// versions before it stay for the runs that started with them. A version
// registered before (a file changed back) is the latest again, with spec
// (the same declaration). An unversioned agent has no other versions.
func (h *Host) AddVersion(spec *AgentSpec) error { return h.register(spec, true) }

func (h *Host) register(spec *AgentSpec, addVersion bool) error {
	if spec == nil || spec.Name == "" || spec.Model == nil {
		return fmt.Errorf("%w: an agent needs a name and a model", ErrBadCommand)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.agents[spec.Name]
	switch {
	case av == nil:
	case !addVersion:
		return fmt.Errorf("agent %q is already registered", spec.Name)
	case spec.Version == "" || av.latest().Version == "":
		return fmt.Errorf("agent %q has no versions: it is registered once", spec.Name)
	}
	pol, err := compilePolicy(spec)
	if err != nil {
		return fmt.Errorf("agent %q: %w", spec.Name, err)
	}
	spec.approval = pol
	spec.lifecycles = make([]*toolsets.Lifecycle, len(spec.Toolsets))
	for i, ts := range spec.Toolsets {
		spec.lifecycles[i] = newLifecycle(ts, spec.PrepareTimeout)
	}
	if av == nil {
		av = &agentVersions{versions: map[string]*AgentSpec{}}
		h.agents[spec.Name] = av
	}
	av.retired = false
	av.versions[spec.Version] = spec
	av.order = append(slices.DeleteFunc(av.order, func(v string) bool { return v == spec.Version }), spec.Version)
	return nil
}

// Withdraw undoes the Register of version of agent name (a reload that
// failed after it): the version before it is the latest again, and a
// name left with no version is not registered. A run started with the
// withdrawn version in between fails as of an unknown agent.
func (h *Host) Withdraw(name, version string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.agents[name]
	if av == nil || av.versions[version] == nil {
		return fmt.Errorf("%w: %q version %q", ErrUnknownAgent, name, version)
	}
	delete(av.versions, version)
	av.order = slices.DeleteFunc(av.order, func(v string) bool { return v == version })
	if len(av.order) == 0 {
		delete(h.agents, name)
	}
	return nil
}

// Retire stops agent name from starting new runs (it was removed from
// its declaration); the runs under way finish with their versions. A
// later Register of the name brings it back.
func (h *Host) Retire(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.agents[name]
	if av == nil {
		return fmt.Errorf("%w: %q", ErrUnknownAgent, name)
	}
	av.retired = true
	return nil
}

// Agent returns the agent named name that new runs start with: its
// latest version, unless it is retired.
func (h *Host) Agent(name string) (*AgentSpec, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.agents[name]
	if av == nil || av.retired {
		return nil, false
	}
	return av.latest(), true
}

// AgentVersion returns version version of agent name, retired or not, for
// a run that started with it; "" (a run that recorded none) is the latest
// version.
func (h *Host) AgentVersion(name, version string) (*AgentSpec, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	av := h.agents[name]
	if av == nil {
		return nil, false
	}
	if version == "" {
		return av.latest(), true
	}
	sp, ok := av.versions[version]
	return sp, ok
}

// runVersion is the agent version run r recorded in its run.started.
func runVersion(r *RunState) string {
	v, _ := r.Metadata[MetaAgentVersion].(string)
	return v
}
