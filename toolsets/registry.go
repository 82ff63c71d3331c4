package toolsets

import (
	"context"
	"encoding/json"
	"errors"
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
// # Timeout
//
// Each attempt gets its own timeout, taken from the first that is set: the
// tool's [Definition.Timeout], its toolset's [ToolsetInfo.Timeout], the
// registry's [WithDefaultTimeout]; else none. Timeouts and cancellation
// are cooperative: the attempt's ctx (and [ToolContext.Done]) ends at the
// deadline or when the caller's ctx ends, and the registry waits for the
// tool to return. A failed attempt whose ctx has ended becomes
// [KindTimeout] or [KindCancelled]; an attempt that still returns a value
// keeps it.
//
// # Retry budget
//
// The budget is a number of retries, "max retries": how many more times
// the registry may run the tool function for the same call after the first
// attempt, so a call makes at most max retries + 1 attempts. Only
// [KindExecution] failures (ordinary errors and panics) and [KindTimeout]
// attempts are retried, immediately, and not once the caller's ctx has
// ended; every other kind returns at once. Resolution takes the first that
// is set: the tool's [Definition.MaxRetries], its toolset's
// [ToolsetInfo.MaxRetries], the registry's [WithDefaultMaxRetries], else
// [DefaultMaxRetries] (2: three attempts in all). [Return.Attempts] and
// [Return.MaxAttempts] report the attempts made and allowed. Model retries
// ([KindModelRetry], [KindInvalidArguments]) are the runtime's business
// and do not use this budget.
type Registry struct {
	defaultTimeout    time.Duration
	defaultMaxRetries int

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
	toolset    string
	timeout    time.Duration
	maxRetries int
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
	return &entry{tool: t, def: def, validator: v, toolset: toolset}, nil
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
// [ToolsetContext]), and registers its tools and instructions. Tool names
// must be unique across the registry; on error nothing is added.
func (r *Registry) AddToolset(ctx context.Context, ts Toolset) error {
	info := ts.Info()
	prep, err := ts.Prepare(ctx, &ToolsetContext{})
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
		e.timeout = firstPositive(e.def.Timeout, info.Timeout, r.defaultTimeout)
		e.maxRetries = r.defaultMaxRetries
		switch {
		case e.def.MaxRetries != nil:
			e.maxRetries = *e.def.MaxRetries
		case info.MaxRetries != nil:
			e.maxRetries = max(*info.MaxRetries, 0)
		}
		r.entries[e.def.Name] = e
		r.order = append(r.order, e)
	}
	r.instructions = append(r.instructions, instructions...)
	return nil
}

func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
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
	// Emitter receives the tool's progress events; nil drops them.
	Emitter Emitter
}

// Call executes inv and returns its canonical return. It never returns a
// Go error: every outcome, an unknown tool included, is a [Return]. It
// blocks until the tool's last attempt returns. See [Registry] for
// timeouts, cancellation and the retry budget.
func (r *Registry) Call(ctx context.Context, inv Invocation) Return {
	r.mu.RLock()
	e := r.entries[inv.Name]
	r.mu.RUnlock()
	if e == nil {
		return r.notFound(inv)
	}
	ret := Return{CallID: inv.CallID, ToolName: inv.Name, MaxAttempts: e.maxRetries + 1}
	if e.def.Visibility == Hidden && inv.Caller == CallerModel {
		msg := fmt.Sprintf("tool %q is not available to the model.", inv.Name)
		return ret.control(KindNotExposed, &Control{Message: msg, HowToFix: "Call one of the tools listed in your tool definitions instead."})
	}
	args := inv.Arguments
	if inv.Approval != nil && inv.Approval.Arguments != nil {
		args = inv.Approval.Arguments
	}
	decoded, ia := decodeArguments(args)
	if ia == nil {
		ia = e.validator.validate(decoded)
	}
	if ia != nil {
		return ret.control(KindInvalidArguments, &Control{Message: ia.Message, Field: ia.Field, HowToFix: ia.HowToFix})
	}
	for retry := 0; ; retry++ {
		if err := ctx.Err(); err != nil {
			return ret.fromError(&CancelledError{Reason: context.Cause(ctx).Error()}, nil)
		}
		ret.Attempts = retry + 1
		val, stack, err := r.attempt(ctx, e, &inv, args, retry)
		kind := KindOf(err)
		if kind.Flags().InternallyRetryable && retry < e.maxRetries && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return ret.fromError(err, stack)
		}
		return ret.success(val)
	}
}

// attempt runs the tool once, recovering a panic into an error with its
// stack, and turns an ordinary error from an ended ctx into a cancellation
// or timeout.
func (r *Registry) attempt(ctx context.Context, e *entry, inv *Invocation, args json.RawMessage, retry int) (val any, stack []byte, err error) {
	actx := ctx
	if e.timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, e.timeout, &TimeoutError{After: e.timeout})
		defer cancel()
	}
	tc := &ToolContext{
		RunID: inv.RunID, SessionID: inv.SessionID, ConversationID: inv.ConversationID,
		CallID: inv.CallID, ToolName: inv.Name, Caller: inv.Caller,
		Retry: retry, MaxRetries: e.maxRetries,
		Approval: inv.Approval, Deferred: inv.Deferred,
		metadata: inv.Metadata, done: actx.Done(), emitter: inv.Emitter,
	}
	defer func() {
		if p := recover(); p != nil {
			val, err, stack = nil, &panicError{value: p}, debug.Stack()
		}
	}()
	val, err = e.tool.Call(actx, tc, args)
	if err != nil && KindOf(err) == KindExecution {
		switch {
		case ctx.Err() != nil:
			err = &CancelledError{Reason: context.Cause(ctx).Error()}
		case actx.Err() != nil:
			err = &TimeoutError{After: e.timeout}
		}
	}
	return val, stack, err
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
	}
	ret := Return{CallID: inv.CallID, ToolName: inv.Name}
	return ret.control(KindNotFound, &Control{Message: fmt.Sprintf("there is no tool named %q.", inv.Name), HowToFix: fix})
}

// control finishes a non-success return whose content is its message.
func (ret Return) control(kind Kind, c *Control) Return {
	f := kind.Flags()
	ret.Kind, ret.Success, ret.IsError, ret.Control = kind, f.Success, f.IsError, c
	text := c.Message
	if c.HowToFix != "" {
		text += " " + c.HowToFix
	}
	ret.Content, _ = json.Marshal(text) // a string always encodes
	return ret
}

// fromError builds the return for a failed last attempt.
func (ret Return) fromError(err error, stack []byte) Return {
	kind := KindOf(err)
	c := &Control{Message: err.Error()}
	switch kind {
	case KindInvalidArguments:
		ia := asType[*InvalidArgumentsError](err)
		c = &Control{Message: ia.Message, Field: ia.Field, HowToFix: ia.HowToFix}
		if c.HowToFix == "" {
			c.HowToFix = "Correct the arguments and call the tool again."
		}
	case KindModelRetry:
		c = &Control{Message: asType[*ModelRetryError](err).Message, HowToFix: "Follow the message and call the tool again."}
	case KindFeedback:
		fb := asType[*FeedbackError](err)
		c = &Control{Message: fb.Message}
		ret.Metadata = fb.Metadata
	case KindUserError:
		c = &Control{Message: err.Error()}
	case KindApprovalRequired:
		ar := asType[*ApprovalRequiredError](err)
		c = &Control{Message: "approval required: " + ar.Reason, Reason: ar.Reason, Metadata: ar.Metadata}
	case KindCallDeferred:
		cd := asType[*CallDeferredError](err)
		c = &Control{Message: "call deferred: " + cd.Reason, Reason: cd.Reason, Metadata: cd.Metadata}
	case KindCancelled, KindTimeout:
		c = &Control{Message: fmt.Sprintf("tool %q: %v", ret.ToolName, err)}
	case KindExecution:
		c = &Control{Message: fmt.Sprintf("tool %q failed after %d attempt(s): %v", ret.ToolName, ret.Attempts, err)}
		if p, ok := err.(*panicError); ok {
			ret.PrivateMetadata = map[string]any{"panic": fmt.Sprint(p.value), "stack": string(stack)}
		}
	}
	return ret.control(kind, c)
}

func asType[T error](err error) T {
	var t T
	_ = errors.As(err, &t)
	return t
}

// success builds the return for a value the tool returned.
func (ret Return) success(val any) Return {
	var res Result
	switch v := val.(type) {
	case Result:
		res = v
	case *Result:
		if v != nil {
			res = *v
		}
	default:
		res.Content = val
	}
	ret.Kind, ret.Success, ret.IsError = KindSuccess, true, false
	ret.Metadata, ret.PrivateMetadata = res.Metadata, res.PrivateMetadata
	ret.Value = res.AppValue
	if ret.Value == nil {
		ret.Value = res.Content
	}
	for _, s := range []struct {
		dst  *json.RawMessage
		v    any
		name string
	}{{&ret.Content, res.Content, "content"}, {&ret.ModelOverride, res.ModelContent, "model content"}, {&ret.AppValue, res.AppValue, "app value"}, {&ret.UserContent, res.UserContent, "user content"}} {
		if s.v == nil {
			continue
		}
		b, err := json.Marshal(s.v)
		if err != nil {
			failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts}
			return failed.fromError(NewUserError(fmt.Sprintf("the tool's %s is not JSON-encodable", s.name), err), nil)
		}
		*s.dst = b
	}
	for name, m := range map[string]map[string]any{"metadata": ret.Metadata, "private metadata": ret.PrivateMetadata} {
		if m == nil {
			continue
		}
		if _, err := json.Marshal(m); err != nil {
			failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts}
			return failed.fromError(NewUserError(fmt.Sprintf("the tool's %s is not JSON-encodable", name), err), nil)
		}
	}
	return ret
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
