package toolsets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
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

// checkHooks rejects hooks without a name.
func checkHooks(hooks []Hook) error {
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
	if err := checkHooks(hooks); err != nil {
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
	if err := checkHooks(hooks); err != nil {
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

// Hooks returns the registry's agent-level hooks, so that a registry
// narrowed or rebuilt from this one keeps them (pass them to [WithHooks]).
func (r *Registry) Hooks() []Hook { return slices.Clone(r.hooks) }

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

// Digest returns the "sha256:<hex>" digest of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// returnDigest digests ret's JSON as encoded, without its hook records.
func returnDigest(ret Return) string {
	ret.Hooks = nil
	b, err := json.Marshal(ret)
	if err != nil {
		return ""
	}
	return Digest(b)
}

// RunBefore runs the Before hooks of hooks on call in order. It returns the
// arguments to run with, the records of what the hooks did, and the
// refusal (nil when the call runs). Hooks that rewrote arguments are
// recorded, and check validates each rewrite (nil checks none).
func RunBefore(ctx context.Context, hooks []Hook, level HookLevel, call HookCall, check func(json.RawMessage) *InvalidArgumentsError) (json.RawMessage, []HookRecord, error) {
	lh := make([]levelHook, len(hooks))
	for i, h := range hooks {
		lh[i] = levelHook{h, level}
	}
	return runBefore(ctx, lh, call, check)
}

func runBefore(ctx context.Context, hooks []levelHook, call HookCall, check func(json.RawMessage) *InvalidArgumentsError) (json.RawMessage, []HookRecord, error) {
	var recs []HookRecord
	for _, h := range hooks {
		if h.Before == nil {
			continue
		}
		call.Level = h.level
		in := call.Arguments
		c := call
		c.Arguments = slices.Clone(in)
		err := callHook(func() error { return h.Before(ctx, &c) })
		if err != nil {
			recs = append(recs, HookRecord{Stage: "before", Level: h.level, Hook: h.Name, Action: ActionRefused, DigestBefore: Digest(in)})
			return nil, recs, refusal(h.Name, err)
		}
		if string(c.Arguments) == string(in) {
			continue
		}
		rec := HookRecord{Stage: "before", Level: h.level, Hook: h.Name, Action: ActionRewrote, DigestBefore: Digest(in), DigestAfter: Digest(c.Arguments)}
		if check != nil {
			if ia := check(c.Arguments); ia != nil {
				rec.Action = ActionRefused
				rec.Message = "the rewritten arguments do not fit the schema"
				if ia.Field != "" {
					rec.Message += " at " + ia.Field
				}
				recs = append(recs, rec)
				return nil, recs, NewUserError(fmt.Sprintf("hook %q rewrote the arguments into ones the tool does not accept (%s)", h.Name, rec.Message), nil)
			}
		}
		recs = append(recs, rec)
		call.Arguments = c.Arguments
	}
	return call.Arguments, recs, nil
}

// refusal is the error a Before hook's refusal becomes: its own kind,
// unless that kind would steer the run (suspend it, or end the call as
// cancelled or timed out), which a hook may not do.
func refusal(hook string, err error) error {
	k := KindOf(err)
	if k.Flags().Suspends || k == KindCancelled || k == KindTimeout || k == KindSuccess {
		return NewUserError(fmt.Sprintf("hook %q refused the call: %v", hook, err), nil)
	}
	return err
}

// callHook runs fn, turning a panic into an error.
func callHook(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v", p)
		}
	}()
	return fn()
}

// RunAfter runs the After hooks of hooks on ret in reverse order under the
// rules of [Hook], appending their records to ret.Hooks.
func RunAfter(ctx context.Context, hooks []Hook, level HookLevel, call HookCall, ret Return) Return {
	lh := make([]levelHook, len(hooks))
	for i, h := range hooks {
		lh[i] = levelHook{h, level}
	}
	return runAfter(ctx, lh, call, ret)
}

func runAfter(ctx context.Context, hooks []levelHook, call HookCall, ret Return) Return {
	for i := len(hooks) - 1; i >= 0; i-- {
		h := hooks[i]
		if h.After == nil {
			continue
		}
		call.Level = h.level
		ret = afterOne(ctx, h, call, ret)
	}
	return ret
}

// afterOne runs one After hook on ret.
func afterOne(ctx context.Context, h levelHook, call HookCall, ret Return) Return {
	cp := ret.copyForHook()
	err := callHook(func() error { return h.After(ctx, call, &cp) })
	in := returnDigest(ret)
	rec := HookRecord{Stage: "after", Level: h.level, Hook: h.Name, DigestBefore: in}
	if ret.Kind != KindSuccess {
		if err != nil {
			rec.Action, rec.Message = ActionRefusedChange, fmt.Sprintf("an after hook failed on a %s return, which it cannot change", ret.Kind)
			ret.Hooks = append(ret.Hooks, rec)
		} else if out := returnDigest(cp); out != in {
			rec.Action, rec.DigestAfter = ActionRefusedChange, out
			rec.Message = fmt.Sprintf("a %s return cannot be changed by a hook", ret.Kind)
			ret.Hooks = append(ret.Hooks, rec)
		}
		return ret
	}
	if err != nil {
		failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts, Hooks: ret.Hooks}
		failed = failed.fromError(outcome{err: refusal(h.Name, fmt.Errorf("after hook %q: %w", h.Name, err))})
		rec.Action, rec.DigestAfter = ActionFailed, returnDigest(failed)
		failed.Hooks = append(failed.Hooks, rec)
		return failed
	}
	if why := forbiddenChange(ret, cp); why != "" {
		if out := returnDigest(cp); out != in {
			rec.Action, rec.DigestAfter, rec.Message = ActionRefusedChange, out, why
			ret.Hooks = append(ret.Hooks, rec)
		}
		return ret
	}
	for _, raw := range []json.RawMessage{cp.Content, cp.ModelOverride, cp.UserContent} {
		if raw != nil && !json.Valid(raw) {
			rec.Action, rec.Message = ActionRefusedChange, "the rewritten content is not JSON"
			ret.Hooks = append(ret.Hooks, rec)
			return ret
		}
	}
	next := ret
	next.Content, next.ModelOverride, next.UserContent = cp.Content, cp.ModelOverride, cp.UserContent
	next.Metadata = keepWeftMetadata(ret.Metadata, cp.Metadata)
	if _, err := json.Marshal(next.Metadata); err != nil {
		rec.Action, rec.Message = ActionRefusedChange, "the rewritten metadata is not JSON-encodable"
		ret.Hooks = append(ret.Hooks, rec)
		return ret
	}
	if out := returnDigest(next); out != in {
		rec.Action, rec.DigestAfter = ActionRewrote, out
		next.Hooks = append(slices.Clip(next.Hooks), rec)
		next.Value = nil // the live value no longer matches the content
	}
	return next
}

// copyForHook copies ret so that a hook's changes do not reach it.
func (ret Return) copyForHook() Return {
	cp := ret
	cp.Content = slices.Clone(ret.Content)
	cp.ModelOverride = slices.Clone(ret.ModelOverride)
	cp.UserContent = slices.Clone(ret.UserContent)
	cp.AppValue = slices.Clone(ret.AppValue)
	cp.Metadata = deepCopyMap(ret.Metadata)
	cp.PrivateMetadata = deepCopyMap(ret.PrivateMetadata)
	cp.Hooks = nil
	if ret.Control != nil {
		c := *ret.Control
		c.Metadata = deepCopyMap(c.Metadata)
		cp.Control = &c
	}
	return cp
}

// deepCopyMap copies m through JSON when it can, so that nested maps are
// not shared; else a shallow copy.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err == nil {
		var out map[string]any
		if json.Unmarshal(b, &out) == nil {
			return out
		}
	}
	return maps.Clone(m)
}

// forbiddenChange says which field an after hook changed that it may not
// change ("" when none).
func forbiddenChange(was, now Return) string {
	switch {
	case now.Kind != was.Kind || now.Success != was.Success || now.IsError != was.IsError:
		return "a hook cannot change the kind of a return"
	case now.CallID != was.CallID || now.ToolName != was.ToolName:
		return "a hook cannot change the call a return answers"
	case now.Attempts != was.Attempts || now.MaxAttempts != was.MaxAttempts:
		return "a hook cannot change the attempts of a return"
	case now.Control != nil:
		return "a hook cannot add control flow to a success"
	case string(now.AppValue) != string(was.AppValue):
		return "a hook cannot change the application value"
	}
	a, _ := json.Marshal(was.PrivateMetadata)
	b, _ := json.Marshal(now.PrivateMetadata)
	if string(a) != string(b) {
		return "a hook cannot change private metadata"
	}
	return ""
}

// keepWeftMetadata returns now with every "weft." key as was has it.
func keepWeftMetadata(was, now map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range now {
		if !strings.HasPrefix(k, "weft.") {
			out[k] = v
		}
	}
	for k, v := range was {
		if strings.HasPrefix(k, "weft.") {
			out[k] = v
		}
	}
	if len(out) == 0 && was == nil {
		return nil
	}
	return out
}

// RefusalReturn is the return of call callID of tool when a Before hook
// run outside a registry ([RunBefore]) refused it with err.
func RefusalReturn(callID, tool string, err error) Return {
	return Return{CallID: callID, ToolName: tool}.fromError(outcome{err: err})
}
