package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// DefaultMaxRetries is the registry's default retry budget: 2 internal
// retries after the first attempt, so the seed's default of 3 attempts.
const DefaultMaxRetries = 2

// Registry holds a fixed inventory of tools and executes calls to them.
// It is safe for concurrent use; calls run on the caller's goroutine.
//
// # Executing a call
//
// [Registry.Call] looks the tool up (unknown → [KindNotFound]; hidden and
// called by the model → [KindNotExposed]), decodes and validates the
// arguments against the cached schema (→ [KindInvalidArguments], the tool
// never runs), then runs attempts until one ends with a kind that is not
// internally retryable or the budget is spent.
//
// # Timeout and cancellation
//
// Each attempt gets its own timeout, taken from the first that is set: the
// tool's [Definition.Timeout], its toolset's [ToolsetInfo.Timeout], the
// registry's [WithDefaultTimeout]; else none. Timeouts and cancellation
// are cooperative: the attempt's ctx (and [ToolContext.Done]) ends at the
// deadline or when the caller's ctx ends, and the registry waits for the
// tool to return.
//
// An attempt that fails with an execution failure after its ctx has ended
// (any ordinary error, context.Canceled and context.DeadlineExceeded
// included, wrapped or not) ends for the reason the ctx ended: its
// timeout, or the caller's deadline, is a [KindTimeout] return whose
// message names the limit and the setting that raises it ([TimeoutLimit]);
// a cancellation is a [KindCancelled] return. Neither is retried. A tool
// that returns context.DeadlineExceeded while its own ctx is still live
// (an inner deadline of its own passed) has an execution failure, retried
// like any other. An attempt that still returns a value keeps it.
//
// # Retry budget
//
// The budget is a number of retries, "max retries": how many more times
// the registry may run the tool function for the same call after the first
// attempt, so a call makes at most max retries + 1 attempts. Only
// [KindExecution] failures (ordinary errors and panics) are retried, as the
// seed says, immediately, and not once the caller's ctx has ended; every
// other kind, a timeout included, returns at once, and so does a [Result]
// marked Failed. Resolution takes the first that is set: the tool's
// [Definition.MaxRetries], its toolset's [ToolsetInfo.MaxRetries], the
// registry's [WithDefaultMaxRetries], else [DefaultMaxRetries] (2: three
// attempts in all). [Return.Attempts] and [Return.MaxAttempts] report the
// attempts made and allowed; [ToolContext.Attempt] tells the tool which
// attempt it runs. Model retries ([KindModelRetry], [KindInvalidArguments])
// are the runtime's business and do not use this budget; the runtime
// passes their count as [Invocation.ModelRetries].
//
// # Captured errors
//
// A return built from an error the tool returned (or a panic) keeps the
// error's message and Go type in its private metadata ([Return.CapturedError]);
// the model sees the message in the content only.
type Registry struct {
	defaultTimeout    time.Duration
	defaultMaxRetries int
	hooks             []Hook // agent-level hooks (WithHooks)

	mu           sync.RWMutex
	entries      map[string]*entry
	order        []*entry
	instructions []Instruction
}

// entry is one registered tool with everything resolved at registration.
type entry struct {
	tool       Tool
	def        Definition // cached copy
	validator  *validator
	conv       *converter // nil: no properties to convert
	toolset    string
	timeout    time.Duration
	limit      TimeoutLimit // where timeout was set
	maxRetries int
	hooks      []levelHook // agent, toolset, tool: before order
}

// RegistryOption configures a [Registry].
type RegistryOption func(*Registry)

// WithDefaultTimeout sets the per-attempt timeout for tools whose tool and
// toolset set none. d <= 0 means no default.
func WithDefaultTimeout(d time.Duration) RegistryOption {
	return func(r *Registry) { r.defaultTimeout = max(d, 0) }
}

// WithDefaultMaxRetries sets the retry budget for tools whose tool and
// toolset set none. n < 0 is treated as 0.
func WithDefaultMaxRetries(n int) RegistryOption {
	return func(r *Registry) { r.defaultMaxRetries = max(n, 0) }
}

// NewRegistry returns an empty registry.
func NewRegistry(opts ...RegistryOption) *Registry {
	r := &Registry{defaultMaxRetries: DefaultMaxRetries, entries: map[string]*entry{}}
	for _, o := range opts {
		o(r)
	}
	return r
}

// compileEntry reads and checks a tool's definition and compiles its
// validator.
func compileEntry(t Tool, toolset string) (*entry, error) {
	def := t.Definition().Clone()
	fail := func(err error) (*entry, error) {
		return nil, &DefinitionError{Toolset: toolset, Tool: def.Name, Err: err}
	}
	if err := def.check(); err != nil {
		return fail(err)
	}
	raw, err := schemaJSON(def.Parameters)
	if len(def.Parameters) == 0 {
		err = &SchemaError{Rule: RuleNotObject, Detail: "the definition has no parameters schema"}
	}
	if err != nil {
		return fail(err)
	}
	def.Parameters = raw
	v, err := newValidator(raw)
	if err != nil {
		return fail(err)
	}
	return &entry{tool: t, def: def, validator: v, conv: newConverter(raw), toolset: toolset}, nil
}

// Register adds tools that belong to no toolset. It checks every
// definition (name, schema rules, strict description) and rejects names
// already registered; on error nothing is added.
func (r *Registry) Register(tools ...Tool) error {
	entries := make([]*entry, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			return fmt.Errorf("register: %w: nil tool", ErrInvalidDefinition)
		}
		e, err := compileEntry(t, "")
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	return r.add(entries, nil, ToolsetInfo{})
}

// AddToolset prepares ts once, for no particular run (a zero
// [ToolsetContext]), with the toolsets its preparation hands back
// ([Resolve]), and registers their tools and instructions. Tool names
// must be unique across the registry; on error nothing is added.
func (r *Registry) AddToolset(ctx context.Context, ts Toolset) error {
	info := ts.Info()
	prep, err := Resolve(ctx, ts, &ToolsetContext{})
	if err != nil {
		return fmt.Errorf("prepare toolset %q: %w", info.Name, err)
	}
	entries := make([]*entry, 0, len(prep.Tools))
	for _, t := range prep.Tools {
		e, err := compileEntry(t, info.Name)
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	return r.add(entries, prep.Instructions, info)
}

func (r *Registry) add(entries []*entry, instructions []Instruction, info ToolsetInfo) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, e := range entries {
		if r.entries[e.def.Name] != nil || seen[e.def.Name] {
			return &DefinitionError{Toolset: e.toolset, Tool: e.def.Name, Err: ErrDuplicateTool}
		}
		seen[e.def.Name] = true
	}
	for _, e := range entries {
		e.timeout, e.limit = timeoutOf(e.def.Timeout, info.Timeout, r.defaultTimeout)
		e.maxRetries = r.defaultMaxRetries
		switch {
		case e.def.MaxRetries != nil:
			e.maxRetries = *e.def.MaxRetries
		case info.MaxRetries != nil:
			e.maxRetries = max(*info.MaxRetries, 0)
		}
		e.hooks = entryHooks(r.hooks, e.def)
		r.entries[e.def.Name] = e
		r.order = append(r.order, e)
	}
	r.instructions = append(r.instructions, instructions...)
	return nil
}

// timeoutOf resolves a tool's per-attempt timeout and where it was set.
func timeoutOf(tool, toolset, registry time.Duration) (time.Duration, TimeoutLimit) {
	switch {
	case tool > 0:
		return tool, LimitTool
	case toolset > 0:
		return toolset, LimitToolset
	case registry > 0:
		return registry, LimitRegistry
	}
	return 0, ""
}

// Lookup returns the definition of the tool registered as name.
func (r *Registry) Lookup(name string) (Definition, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e := r.entries[name]
	if e == nil {
		return Definition{}, false
	}
	return e.def.Clone(), true
}

// Definitions returns every registered definition, hidden ones included,
// in registration order.
func (r *Registry) Definitions() []Definition {
	return r.definitions(func(*entry) bool { return true })
}

// ModelDefinitions returns the definitions a model may see: all but the
// hidden ones, in registration order. Provider payloads are built from
// these only.
func (r *Registry) ModelDefinitions() []Definition {
	return r.definitions(func(e *entry) bool { return e.def.Visibility != Hidden })
}

func (r *Registry) definitions(keep func(*entry) bool) []Definition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Definition
	for _, e := range r.order {
		if keep(e) {
			out = append(out, e.def.Clone())
		}
	}
	return out
}

// Invocation is one call to execute.
type Invocation struct {
	// CallID is the provider's tool call id.
	CallID string
	// Name is the tool name the caller asked for.
	Name string
	// Arguments is the raw JSON argument object (empty means {}).
	Arguments json.RawMessage
	// Caller says who asked; the zero value is [CallerModel].
	Caller Caller
	// RunID, SessionID and ConversationID are passed to the [ToolContext].
	RunID          string
	SessionID      string
	ConversationID string
	// Metadata is run metadata, shown read-only to the tool. Not copied:
	// do not change it during the call.
	Metadata map[string]any
	// Approval is set when resuming an approved call; its Arguments, when
	// set, replace Arguments.
	Approval *Approval
	// Deferred is set when resuming a deferred call with its result.
	Deferred *DeferredResult
	// Elicitation is set when resuming a call after a person answered the
	// input it asked for.
	Elicitation *Elicitation
	// Emitter receives the tool's progress events; nil drops them.
	Emitter Emitter
	// ModelRetries is how many times the model has been asked to retry
	// this tool in this run so far (after model_retry and
	// invalid_arguments returns), shown to the tool as
	// [ToolContext.ModelRetries]. The runtime fills it from the run's
	// events; direct callers may leave it 0.
	ModelRetries int
	// Code is the journal and variables of a code-mode call (see
	// [CodeInput]); nil for other calls.
	Code *CodeInput
}

// Call executes inv and returns its canonical return. It never returns a
// Go error: every outcome, an unknown tool included, is a [Return]. It
// blocks until the tool's last attempt returns. See [Registry] for
// timeouts, cancellation and the retry budget.
func (r *Registry) Call(ctx context.Context, inv Invocation) Return {
	e, args, live, ret, refused := r.admit(inv)
	if refused {
		return ret
	}
	if len(e.hooks) == 0 {
		return r.run(ctx, e, inv, args, live, ret)
	}
	call := HookCall{CallID: inv.CallID, ToolName: inv.Name, RunID: inv.RunID, SessionID: inv.SessionID, Caller: inv.Caller, Arguments: args, Metadata: inv.Metadata}
	args, recs, err := runBefore(ctx, e.hooks, call, func(a json.RawMessage) *InvalidArgumentsError {
		_, ia := e.check(a)
		return ia
	})
	if err != nil {
		ret = ret.fromError(outcome{err: err})
		ret.Hooks = recs
		return ret
	}
	if len(recs) > 0 {
		// The validators may have normalised the rewrite.
		args, _ = e.check(args)
	}
	// A rewrite is validated, not converted again: the live values bound
	// by the conversion of the call's own arguments stay.
	ret = r.run(ctx, e, inv, args, live, ret)
	ret.Hooks = append(recs, ret.Hooks...)
	call.Arguments = args
	return runAfter(ctx, e.hooks, call, ret)
}

// run makes the attempts of an admitted call.
func (r *Registry) run(ctx context.Context, e *entry, inv Invocation, args json.RawMessage, live map[string]any, ret Return) Return {
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return ret.fromError(outcome{err: endedError(ctx)})
		}
		ret.Attempts = attempt
		out := r.attempt(ctx, e, &inv, args, live, attempt)
		if KindOf(out.err).Flags().InternallyRetryable && attempt <= e.maxRetries && ctx.Err() == nil {
			continue
		}
		if out.err != nil {
			return ret.fromError(out)
		}
		return registerHandlers(e.tool, out.val, ret.success(out.val))
	}
}

// Refusal returns the return [Registry.Call] gives inv without running any
// tool, when it refuses the call: an unknown tool ([KindNotFound]), a hidden
// tool called by the model ([KindNotExposed]), arguments that are not JSON
// or do not fit the schema ([KindInvalidArguments], with the tool's
// MaxAttempts). refused is false when the call would run. It never blocks.
func (r *Registry) Refusal(inv Invocation) (ret Return, refused bool) {
	_, _, _, ret, refused = r.admit(inv)
	return ret, refused
}

// admit looks inv's tool up and checks its arguments: the entry and the
// arguments to run it with, or the return that refuses it.
func (r *Registry) admit(inv Invocation) (e *entry, args json.RawMessage, live map[string]any, ret Return, refused bool) {
	r.mu.RLock()
	e = r.entries[inv.Name]
	r.mu.RUnlock()
	if e == nil {
		return nil, nil, nil, r.notFound(inv), true
	}
	ret = Return{CallID: inv.CallID, ToolName: inv.Name, MaxAttempts: e.maxRetries + 1}
	if e.def.Visibility == Hidden && inv.Caller == CallerModel {
		msg := fmt.Sprintf("tool %q is not available to the model.", inv.Name)
		return e, nil, nil, ret.control(KindNotExposed, &Control{Message: msg, HowToFix: "Call one of the tools listed in your tool definitions instead."}), true
	}
	args = inv.Arguments
	if inv.Approval != nil && inv.Approval.Arguments != nil {
		args = inv.Approval.Arguments
	}
	decoded, ia := decodeArguments(args)
	if ia == nil && e.conv != nil && e.conv.needs(decoded) {
		// Argument conversion (convert.go) before validation.
		if out, bound, changed := e.conv.convert(decoded, r.variables(inv)); changed {
			if b, err := json.Marshal(out); err == nil {
				decoded, args, live = out, b, bound
			}
		}
	}
	if ia == nil {
		// The schema, then the argument validators (argvalidate.go).
		args, ia = e.checkDecoded(args, decoded)
	}
	if ia != nil {
		return e, args, nil, ret.control(KindInvalidArguments, &Control{Message: ia.Message, Field: ia.Field, HowToFix: ia.HowToFix}), true
	}
	return e, args, live, ret, false
}

// variables are the values a string argument of inv may name: the job's
// durable variables the runtime passed, and the live values of the
// registry's variable sources (code mode's host objects).
func (r *Registry) variables(inv Invocation) Variables {
	var v Variables
	var handles map[string]string
	if inv.Code != nil {
		v.Durable, handles = inv.Code.Variables, inv.Code.Objects
	}
	v.Live = func(name string) (any, bool) {
		if h, ok := handles[name]; ok {
			name = h
		}
		r.mu.RLock()
		defer r.mu.RUnlock()
		for _, e := range r.order {
			if src, ok := Find[VariableSource](e.tool); ok {
				if val, ok := src.LiveVariable(name); ok {
					return val, true
				}
			}
		}
		return nil, false
	}
	return v
}

// attempt runs the tool once (attempt counts from 1), recovering a panic
// into an error with its stack, and reads an execution failure from an
// ended ctx as the reason it ended (attemptError).
func (r *Registry) attempt(ctx context.Context, e *entry, inv *Invocation, args json.RawMessage, live map[string]any, attempt int) (out outcome) {
	actx := ctx
	if e.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, e.timeout, &TimeoutError{After: e.timeout, Limit: e.limit})
		defer cancel()
	}
	tc := &ToolContext{
		RunID: inv.RunID, SessionID: inv.SessionID, ConversationID: inv.ConversationID,
		CallID: inv.CallID, ToolName: inv.Name, Caller: inv.Caller,
		Attempt: attempt, MaxAttempts: e.maxRetries + 1, ModelRetries: inv.ModelRetries,
		Approval: inv.Approval, Deferred: inv.Deferred, Elicitation: inv.Elicitation, Code: inv.Code,
		metadata: inv.Metadata, done: actx.Done(), emitter: inv.Emitter, bound: live,
	}
	defer func() {
		if p := recover(); p != nil {
			perr := &panicError{value: p}
			out = outcome{err: perr, tool: perr, stack: debug.Stack()}
		}
	}()
	val, err := e.tool.Call(actx, tc, args)
	return outcome{val: val, err: attemptError(actx, err), tool: err}
}

// panicError is a recovered panic. It is an Execution failure.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func (r *Registry) notFound(inv Invocation) Return {
	r.mu.RLock()
	var names []string
	for _, e := range r.order {
		if e.def.Visibility != Hidden {
			names = append(names, e.def.Name)
		}
	}
	r.mu.RUnlock()
	fix := "No tools are available."
	if len(names) > 0 {
		fix = "Call one of the available tools: " + quoteList(names) + "."
		if close := Closest(inv.Name, names, 3); len(close) > 0 {
			fix = "Did you mean " + quoteList(close) + "? " + fix
		}
	}
	ret := Return{CallID: inv.CallID, ToolName: inv.Name}
	return ret.control(KindNotFound, &Control{Message: fmt.Sprintf("NameError: there is no tool named %q.", inv.Name), HowToFix: fix})
}

// Names returns the registered tool names in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, len(r.order))
	for i, e := range r.order {
		names[i] = e.def.Name
	}
	return slices.Clip(names)
}
