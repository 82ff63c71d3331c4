package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Hook is a tool-execution hook: code that runs around every call of the
// tools it applies to. Register it on an agent (the registry's
// [WithHooks]: every tool), on a toolset ([HookToolset]: that toolset's
// tools) or on one tool ([HookTool]).
//
// # Order and frequency
//
// For one call: the agent's Before hooks, then the toolset's, then the
// tool's (each level in registration order); then the call with its
// internal retries; then the After hooks in the reverse order: the
// tool's, the toolset's, the agent's. Hooks run once per call, never once
// per attempt, and only when the call runs: a call the registry refuses
// (unknown tool, hidden tool, invalid arguments) runs none.
//
// # Powers
//
// A Before hook may rewrite [HookCall.Arguments] (the new arguments are
// validated against the tool's schema and its argument validators again; a
// rewrite that does not fit refuses the call as [KindUserError]) or refuse
// the call by returning an error: the call's return is built from the
// error as a tool's error would be ([KindOf]), except that a kind that
// suspends the run or ends it as cancelled or timed out becomes
// [KindUserError]: a hook refuses, it does not ask for approval.
//
// An After hook may rewrite the Content, ModelOverride, UserContent and
// Metadata of a successful return (Kind success) and nothing else.
// Metadata keys under "weft." are kept as the call produced them. Any
// other change, and any change of a return that is not a success (an
// approval_required, call_deferred, elicitation_required, cancelled or
// timeout return above all), is refused: the return stays what it was,
// and the attempt is recorded with the action "refused_change". An After
// hook that returns an error turns a success into the return of that
// error; on any other return its error is recorded as refused_change too.
//
// # Audit
//
// What a hook did, when it did anything, is recorded in [Return.Hooks]
// (and so in the tool.returned event): the stage, the hook's name, the
// action and the SHA-256 digests of what it saw and what it left (the
// arguments' JSON before a call, the return's JSON after it); never the
// values, so a hook that injects a credential leaves no copy of it in
// the log.
type Hook struct {
	// Name names the hook in the audit record; required.
	Name string
	// Before runs before the call; nil for none.
	Before func(ctx context.Context, call *HookCall) error
	// After runs after the call with the return it may rewrite; nil for
	// none. call.Arguments are the arguments the tool ran with.
	After func(ctx context.Context, call HookCall, ret *Return) error
}

// HookCall is the call a hook sees.
type HookCall struct {
	CallID    string
	ToolName  string
	RunID     string
	SessionID string
	Caller    Caller
	// Arguments is the argument object; a Before hook may replace it.
	Arguments json.RawMessage
	// Metadata is the run's metadata, read-only.
	Metadata map[string]any
	// Level is where the hook was registered: agent, toolset or tool.
	Level HookLevel
}

// HookLevel is where a hook was registered.
type HookLevel string

// The hook levels, outermost first.
const (
	LevelAgent   HookLevel = "agent"
	LevelToolset HookLevel = "toolset"
	LevelTool    HookLevel = "tool"
)

// HookAction is what a hook did to a call, as recorded.
type HookAction string

// The recorded hook actions.
const (
	// ActionRewrote: the hook changed the arguments (before) or the
	// return (after).
	ActionRewrote HookAction = "rewrote"
	// ActionRefused: a Before hook refused the call.
	ActionRefused HookAction = "refused"
	// ActionFailed: an After hook failed on a success, whose return became
	// the hook's error.
	ActionFailed HookAction = "failed"
	// ActionRefusedChange: the hook tried a change it has no power to make;
	// the return was kept.
	ActionRefusedChange HookAction = "refused_change"
)

// HookRecord is one hook's recorded action on a call.
type HookRecord struct {
	// Stage is "before" or "after".
	Stage string `json:"stage"`
	// Level is where the hook was registered.
	Level HookLevel `json:"level"`
	// Hook is the hook's name.
	Hook   string     `json:"hook"`
	Action HookAction `json:"action"`
	// DigestBefore and DigestAfter are "sha256:<hex>" digests of the
	// arguments (before stage) or the return (after stage) the hook was
	// given and the ones it left.
	DigestBefore string `json:"digest_before,omitempty"`
	DigestAfter  string `json:"digest_after,omitempty"`
	// Message says why a change was refused or what failed.
	Message string `json:"message,omitempty"`
}

// levelHook is a hook with the level it was registered at.
type levelHook struct {
	Hook
	level HookLevel
}

// CheckHooks refuses hooks without a name (ErrInvalidDefinition).
func CheckHooks(hooks []Hook) error {
	for _, h := range hooks {
		if h.Name == "" {
			return fmt.Errorf("%w: a hook has no name", ErrInvalidDefinition)
		}
	}
	return nil
}

// HookTool returns t with hooks of the tool level: they run closest to the
// call, inside the agent's and the toolset's. A hooked tool runs its hooks
// wherever it runs (on a worker, for a remote tool).
func HookTool(t Tool, hooks ...Hook) (Tool, error) {
	if err := CheckHooks(hooks); err != nil {
		return nil, err
	}
	def := t.Definition()
	x := def.extras()
	x.toolHooks = append(x.toolHooks, hooks...)
	def.Extras = x
	return &overlay{inner: t, def: def}, nil
}

// HookToolset returns ts whose tools carry hooks of the toolset level.
func HookToolset(ts Toolset, hooks ...Hook) (*Wrapped, error) {
	if err := CheckHooks(hooks); err != nil {
		return nil, err
	}
	hooks = slices.Clone(hooks)
	w := wrap(ts, "hooked", nil)
	w.apply = func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		tools := make([]Tool, len(p.Tools))
		for i, t := range p.Tools {
			wt, err := w.wrapTool(t, func(t Tool) (Tool, error) {
				def := t.Definition()
				x := def.extras()
				x.toolsetHooks = append(x.toolsetHooks, hooks...)
				def.Extras = x
				return &overlay{inner: t, def: def}, nil
			})
			if err != nil {
				return Preparation{}, err
			}
			tools[i] = wt
		}
		p.Tools = tools
		return p, nil
	}
	return w, nil
}

// WithHooks sets the agent-level hooks of a registry: they apply to every
// tool it holds, outermost.
func WithHooks(hooks ...Hook) RegistryOption {
	return func(r *Registry) { r.hooks = append(r.hooks, hooks...) }
}

// entryHooks lists the hooks of a tool in before order.
func entryHooks(agent []Hook, def Definition) []levelHook {
	var out []levelHook
	x := def.Extras
	if x == nil {
		x = &Extras{}
	}
	for _, l := range []struct {
		hooks []Hook
		level HookLevel
	}{{agent, LevelAgent}, {x.toolsetHooks, LevelToolset}, {x.toolHooks, LevelTool}} {
		for _, h := range l.hooks {
			out = append(out, levelHook{h, l.level})
		}
	}
	return out
}
