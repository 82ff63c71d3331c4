package toolsets

import (
	"context"
	"fmt"
	"maps"
	"sync"
)

// FunctionToolset is a toolset authored from Go functions with shared
// defaults. Build it with [NewFunction]; add tools with [Add] (functions
// that take the [ToolContext]) and [AddPlain] (functions that do not).
//
// Its defaults (metadata, strict, sequential, concurrent-safe, timeout,
// max retries) apply to each added tool unless the tool sets its own:
// metadata is merged under the tool's keys; strict, sequential and
// concurrent-safe apply when the tool did not pass [WithStrict] /
// [WithSequential] / [WithConcurrentSafe]; timeout and max retries are the
// toolset-level step of the registry's precedence. It is safe for
// concurrent use.
type FunctionToolset struct {
	info     ToolsetInfo
	defaults settings

	mu    sync.Mutex
	tools []Tool
	names map[string]bool
}

var _ Toolset = (*FunctionToolset)(nil)

// functionFields are the options [NewFunction] accepts.
const functionFields = fID | fInstructions | fTimeout | fMaxRetries | fMetadata | fStrict | fSequential | fConcurrentSafe

// NewFunction builds an empty function toolset named name. It accepts
// [WithID], [WithInstructions], [WithMaxRetries], [WithTimeout],
// [WithMetadata], [WithStrict], [WithSequential] and [WithConcurrentSafe].
func NewFunction(name string, opts ...Option) (*FunctionToolset, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("toolset: %w", err)
	}
	var s settings
	if err := s.apply(opts, functionFields, "a function toolset"); err != nil {
		return nil, fmt.Errorf("toolset %q: %w", name, err)
	}
	return &FunctionToolset{info: infoFrom(name, &s), defaults: s, names: map[string]bool{}}, nil
}

// Add adds a tool built from fn, which takes the call's [*ToolContext], to
// fs. See [NewFunc] for argument and result types, and [FunctionToolset]
// for how the toolset's defaults apply.
func Add[A, R any](fs *FunctionToolset, name string, fn func(context.Context, *ToolContext, A) (R, error), opts ...Option) error {
	if fn == nil {
		return &DefinitionError{Toolset: fs.info.Name, Tool: name, Err: fmt.Errorf("%w: nil function", ErrInvalidDefinition)}
	}
	return addFunc(fs, name, fn, opts)
}

// AddPlain adds a "plain" tool built from fn, which does not take a
// [ToolContext] (a deterministic helper). An argument type of ToolContext
// is rejected.
func AddPlain[A, R any](fs *FunctionToolset, name string, fn func(context.Context, A) (R, error), opts ...Option) error {
	if fn == nil {
		return &DefinitionError{Toolset: fs.info.Name, Tool: name, Err: fmt.Errorf("%w: nil function", ErrInvalidDefinition)}
	}
	return addFunc(fs, name, func(ctx context.Context, _ *ToolContext, a A) (R, error) { return fn(ctx, a) }, opts)
}

func addFunc[A, R any](fs *FunctionToolset, name string, fn func(context.Context, *ToolContext, A) (R, error), opts []Option) error {
	// Strictness is checked after the toolset default applies.
	t, err := newFuncTool(name, fn, append(append([]Option(nil), opts...), func(s *settings) {
		if !s.has(fStrict) && fs.defaults.has(fStrict) {
			s.strict = fs.defaults.strict
		}
	}))
	if err != nil {
		if de, ok := err.(*DefinitionError); ok {
			de.Toolset = fs.info.Name
		}
		return err
	}
	d := fs.defaults
	if !t.explicit.has(fSequential) && d.has(fSequential) {
		t.def.Sequential = d.sequential
	}
	if !t.explicit.has(fConcurrentSafe) && d.has(fConcurrentSafe) {
		t.def.ConcurrentSafe = d.concurrent
	}
	if d.has(fMetadata) {
		merged := maps.Clone(d.metadata)
		maps.Copy(merged, t.def.Metadata)
		t.def.Metadata = merged
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.names[name] {
		return &DefinitionError{Toolset: fs.info.Name, Tool: name, Err: ErrDuplicateTool}
	}
	fs.names[name] = true
	fs.tools = append(fs.tools, t)
	return nil
}

func (f field) has(g field) bool { return f&g != 0 }

// Info returns the toolset's identity and its timeout/retry defaults.
func (fs *FunctionToolset) Info() ToolsetInfo { return fs.info.clone() }

// Prepare returns the tools added so far and the toolset's instructions;
// it ignores ctx and tc.
func (fs *FunctionToolset) Prepare(context.Context, *ToolsetContext) (Preparation, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return Preparation{
		Tools:        append([]Tool(nil), fs.tools...),
		Instructions: instructionsFrom(fs.info.Name, fs.defaults.instructions),
	}, nil
}
