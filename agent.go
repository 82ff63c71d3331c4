package weft

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// AgentConfig describes an agent.
type AgentConfig struct {
	// Model answers the agent's requests (required).
	Model llm.Model
	// Tools are loose tools; Toolsets are prepared before every model
	// request.
	Tools    []toolsets.Tool
	Toolsets []toolsets.Toolset
	// Instructions are the agent's system instructions.
	Instructions []string
	// ApprovalRequiredTools is the profile-level approval policy: entries
	// match a tool name, a toolset name or id (of the toolset or one it
	// wraps), a metadata bundle (metadata["bundle"]) or "*", through
	// toolsets.Selector. A matching call waits for approval before it
	// runs, and its definition carries toolsets.MetaApprovalRequired. An
	// entry that matches nothing is an error: NewAgent refuses it when
	// every toolset can be listed (toolsets.KnownTools); otherwise each
	// preparation checks the entries and a miss fails the run with kind
	// policy_error (see the README's approval selectors).
	ApprovalRequiredTools []string
	// TrustedTools opts the agent out of the approval gates its tools
	// bring themselves (a toolset's default: an MCP tool annotated
	// destructive, the filesystem toolset's writes, the shell toolset's
	// commands): entries as for ApprovalRequiredTools select tools whose
	// calls then run without a person's approval, the approval decided by
	// the agent's policy (toolsets.ToolContext.Approval.DecidedBy says
	// which entry). ApprovalRequiredTools still applies to them: an
	// explicit policy is never loosened. An entry that matches nothing is
	// an error, as for ApprovalRequiredTools.
	TrustedTools []string
	// Limits bound each run's usage (the zero value: no limit); see
	// UsageLimits.
	Limits UsageLimits
	// MaxRetries is the retry budget of tools that set none (nil: the
	// registry default, 2). It bounds both internal retries of a call and
	// the model retries of a tool within a run.
	MaxRetries *int
	// Timeout is the per-attempt timeout of tools that set none.
	Timeout time.Duration
	// PrepareTimeout is the read timeout of toolsets that carry no
	// lifecycle policy (toolsets.WithLifecycle); 0 means
	// toolsets.DefaultReadTimeout.
	PrepareTimeout time.Duration
	// ModelSettings are the generation settings of every model request.
	ModelSettings llm.Settings
	// OutputValidators check each final text output; one that returns an
	// error rejects it and the model is asked again with the error's text
	// as a retry prompt.
	OutputValidators []OutputValidator
	// OutputRetries is how many outputs of a run the validators may
	// reject before the run fails with output_retry_limit_exceeded (0: 2).
	OutputRetries int
	// OnRunStart hooks run, in order, before each run starts; see
	// RunStartHook.
	OnRunStart []RunStartHook
	// ToolHooks are the agent's tool-execution hooks: around every call
	// of its tools, outside those of toolsets (toolsets.HookToolset) and
	// tools (toolsets.HookTool); see toolsets.Hook and the README's hook
	// rules.
	ToolHooks []toolsets.Hook
	// Version identifies this declaration of the agent. Empty (the
	// default): the name has one declaration. With a version,
	// NewAgentVersion may register the name again with another version (a
	// reload): new runs start with the latest, and each run is driven by
	// the version its run.started records (metadata MetaAgentVersion)
	// until it ends.
	Version string
	// Capabilities are capability bundles, applied in order after the
	// fields above; see CapabilityBundle.
	Capabilities []CapabilityBundle
	// WorkspaceRoot, Environment and Resources reach the toolsets in
	// their ToolsetContext.
	WorkspaceRoot string
	Environment   any
	Resources     toolsets.Resources
	// StrictToolsetIDs makes NewAgent refuse toolsets without an explicit
	// id (none, or the name standing in for it: toolsets.ToolsetInfo.
	// ImplicitID), besides blank and duplicate ids, which are always
	// refused; see toolsets.ValidateIDs. Without it, missing ids are
	// warnings reported by Agent.ToolsetIDs and only blank or duplicate
	// ids fail.
	StrictToolsetIDs bool
}

// OutputValidator checks a run's final text output; an error rejects it.
// Return toolsets.ModelRetry(msg) to give the model exactly msg. It runs
// on the goroutine that called the model.
type OutputValidator func(ctx context.Context, output string) error

// Agent is an agent registered on a runtime by name.
type Agent struct {
	rt    *Runtime
	spec  *actors.AgentSpec
	hooks []RunStartHook
	ids   *toolsets.IDReport
}

// NewAgent registers an agent named name. The name is recorded in every
// run's events; a restarted runtime registers the same agents before
// Recover. It fails on toolset identity problems (see StrictToolsetIDs)
// and on approval or deferral entries that match nothing, in the agent's
// policy or in the wrappers of toolsets it can list (toolsets.KnownTools;
// listing them also reports their other wrapper errors early); such an
// error matches toolsets.ErrUnmatchedSelector (a *toolsets.SelectorError).
func (rt *Runtime) NewAgent(name string, cfg AgentConfig) (*Agent, error) {
	return rt.newAgent(name, cfg, false)
}

// NewAgentVersion registers cfg as a new version (cfg.Version, required)
// of agent name, or as a new agent: new runs start with it (through any
// handle of the name that names no version, such as a start over NATS),
// and the runs that started with an earlier version go on with theirs. A
// reload of declared agents does this (package agentspec).
func (rt *Runtime) NewAgentVersion(name string, cfg AgentConfig) (*Agent, error) {
	if cfg.Version == "" {
		return nil, fmt.Errorf("weft: agent %q: NewAgentVersion needs AgentConfig.Version", name)
	}
	return rt.newAgent(name, cfg, true)
}

func (rt *Runtime) newAgent(name string, cfg AgentConfig, addVersion bool) (*Agent, error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("weft: agent %q: %w", name, errors.New("no model"))
	}
	spec := &actors.AgentSpec{Name: name, Model: cfg.Model, Tools: cfg.Tools, Toolsets: slices.Clone(cfg.Toolsets), Instructions: slices.Clone(cfg.Instructions),
		ApprovalRequired: cfg.ApprovalRequiredTools, Trusted: slices.Clone(cfg.TrustedTools), Limits: cfg.Limits.spec(), MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout,
		PrepareTimeout: cfg.PrepareTimeout, Settings: cloneSettings(cfg.ModelSettings), OutputValidators: validators(cfg.OutputValidators), OutputRetries: cfg.OutputRetries,
		ToolHooks: slices.Clone(cfg.ToolHooks), WorkspaceRoot: cfg.WorkspaceRoot, Environment: cfg.Environment, Resources: cfg.Resources, Version: cfg.Version}
	hooks := slices.Clone(cfg.OnRunStart)
	if err := toolsets.CheckHooks(spec.ToolHooks); err != nil {
		return nil, fmt.Errorf("weft: agent %q: %w", name, err)
	}
	for _, b := range cfg.Capabilities {
		bh, err := b.apply(spec)
		if err != nil {
			return nil, fmt.Errorf("weft: agent %q: %w", name, err)
		}
		hooks = append(hooks, bh...)
	}
	ids := toolsets.ValidateIDs(cfg.StrictToolsetIDs, spec.Toolsets...)
	if err := ids.Err(); err != nil {
		return nil, fmt.Errorf("weft: agent %q: %w", name, err)
	}
	register := rt.host.Register
	if addVersion {
		register = rt.host.AddVersion
	}
	if err := register(spec); err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	return &Agent{rt: rt, spec: spec, hooks: hooks, ids: ids}, nil
}

// MetaAgentVersion is the run metadata key of the agent version a run
// started with (AgentConfig.Version), recorded in its run.started.
const MetaAgentVersion = actors.MetaAgentVersion

// RetireAgent stops agent name from starting new runs (its declaration
// was removed); the runs under way finish with the versions they started
// with. NewAgent with the name brings it back.
func (rt *Runtime) RetireAgent(name string) error {
	if err := rt.host.Retire(name); err != nil {
		return fmt.Errorf("weft: %w", err)
	}
	return nil
}

// WithdrawAgent undoes NewAgent of version of agent name (a reload that
// failed after registering it): the version before it is the one new runs
// start with again.
func (rt *Runtime) WithdrawAgent(name, version string) error {
	if err := rt.host.Withdraw(name, version); err != nil {
		return fmt.Errorf("weft: %w", err)
	}
	return nil
}

// AgentVersion returns the version new runs of agent name start with (a
// start that names none), and false when no run of it can start (not
// registered, or retired).
func (rt *Runtime) AgentVersion(name string) (string, bool) {
	spec, ok := rt.host.Agent(name)
	if !ok {
		return "", false
	}
	return spec.Version, true
}

// Version returns the agent's version (AgentConfig.Version).
func (a *Agent) Version() string { return a.spec.Version }

// ToolsetIDs returns the identity check of the agent's toolsets (its
// warnings: duplicate names, and missing ids when not strict).
func (a *Agent) ToolsetIDs() *toolsets.IDReport { return a.ids }

// ToolsetIDList returns the ids of the agent's toolsets, in order: the
// ids a session archive of the agent requires.
func (a *Agent) ToolsetIDList() []string {
	out := make([]string, 0, len(a.spec.Toolsets))
	for _, ts := range a.spec.Toolsets {
		out = append(out, ts.Info().ID)
	}
	return out
}

// Name returns the agent's name.
func (a *Agent) Name() string { return a.spec.Name }

// NewSession returns a new session (a fresh UUIDv7 id) of the agent.
func (a *Agent) NewSession() *Session {
	s := &Session{agent: a, id: uuid.Must(uuid.NewV7()).String()}
	s.fresh.Store(true)
	return s
}

// Session returns the session with id, new or existing.
func (a *Agent) Session(id string) *Session { return &Session{agent: a, id: id} }

// Run runs prompt in a new session and returns when the run completes,
// fails, is cancelled or waits for decisions. A failed run returns its
// Result and a *RunError. When ctx ends first, the run is cancelled.
func (a *Agent) Run(ctx context.Context, prompt string, opts ...RunOption) (*Result, error) {
	return a.NewSession().Run(ctx, prompt, opts...)
}

// RunStream runs prompt in a new session and yields the run's events as
// they are recorded, until the run settles. See Session.RunStream.
func (a *Agent) RunStream(ctx context.Context, prompt string, opts ...RunOption) iter.Seq2[events.Event, error] {
	return a.NewSession().RunStream(ctx, prompt, opts...)
}
