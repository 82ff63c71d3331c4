package toolsets

import (
	"context"
	"errors"
	"fmt"
)

// Enterer is implemented by toolsets that acquire something for a run
// (a connection, a lease, a snapshot) before they are prepared. A runtime
// calls Enter once per run, before the run's first preparation, unless
// the toolset's [LifecyclePolicy] says SkipEnter; [Lifecycle] does this.
type Enterer interface {
	// Enter readies the toolset for tc's run. It may block and must honour
	// ctx (bounded by the policy's InitTimeout). An error fails the toolset
	// for the run: it is not prepared, and Exit is not called.
	Enter(ctx context.Context, tc *ToolsetContext) error
}

// Refresher is implemented by toolsets that prepare differently when a
// run is prepared again (a later step, or the re-preparation after an
// approval resume). Without it, a re-preparation calls Prepare again.
type Refresher interface {
	// Refresh returns the toolset's inventory for a run it was already
	// prepared for. Same contract as [Toolset.Prepare].
	Refresh(ctx context.Context, tc *ToolsetContext) (Preparation, error)
}

// Exiter is implemented by toolsets that release what Enter acquired. A
// runtime calls Exit once when the run ends (completed, failed or
// cancelled), for every toolset it entered, unless the policy says
// SkipExit; [Lifecycle.Exit] does this.
type Exiter interface {
	// Exit releases the toolset's resources for tc's run. It may block and
	// must honour ctx (bounded by the policy's ExitTimeout).
	Exit(ctx context.Context, tc *ToolsetContext) error
}

// MaxNesting bounds how deep [Preparation.Toolsets] may nest (a toolset
// whose preparation holds a toolset whose preparation holds …).
const MaxNesting = 8

// ErrNesting reports a preparation nested deeper than [MaxNesting], which
// is usually a toolset that returns itself.
var ErrNesting = errors.New("toolsets: toolsets nested too deep")

// Resolve prepares ts for tc and flattens its preparation: the tools and
// instructions of every nested toolset ([Preparation.Toolsets]) are
// prepared for the same tc and appended, depth first, after the toolset's
// own. Nested tools that set no timeout or retry budget get their own
// toolset's defaults, so flattening does not lose them. The result has no
// Toolsets, and tool names must be unique in it: a duplicate is a
// [*DefinitionError] matching [ErrDuplicateTool] that names the tool.
//
// A runtime calls Resolve (or [Lifecycle.Prepare], which calls it) instead
// of ts.Prepare so that dynamic toolsets may return other toolsets. The
// wrappers and [Factory] toolsets in this package already return
// resolved preparations.
func Resolve(ctx context.Context, ts Toolset, tc *ToolsetContext) (Preparation, error) {
	return resolve(ctx, ts, tc, false)
}

// ResolveRefresh is [Resolve] for a re-preparation: it calls Refresh on
// ts (and on nested toolsets) when they implement [Refresher], Prepare
// otherwise.
func ResolveRefresh(ctx context.Context, ts Toolset, tc *ToolsetContext) (Preparation, error) {
	return resolve(ctx, ts, tc, true)
}

func resolve(ctx context.Context, ts Toolset, tc *ToolsetContext, refresh bool) (Preparation, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	var out Preparation
	seen := map[string]bool{}
	if err := resolveInto(ctx, ts, tc, refresh, 0, false, &out, seen); err != nil {
		return Preparation{}, err
	}
	return out, nil
}

func resolveInto(ctx context.Context, ts Toolset, tc *ToolsetContext, refresh bool, depth int, nested bool, out *Preparation, seen map[string]bool) error {
	if ts == nil {
		return fmt.Errorf("%w: nil toolset", ErrInvalidDefinition)
	}
	info := ts.Info()
	if depth > MaxNesting {
		return fmt.Errorf("toolset %q: %w (more than %d levels)", info.Name, ErrNesting, MaxNesting)
	}
	p, err := prepareOnce(ctx, ts, tc, refresh)
	if err != nil {
		if depth == 0 {
			return err
		}
		return fmt.Errorf("prepare nested toolset %q: %w", info.Name, err)
	}
	for _, t := range p.Tools {
		if t == nil {
			return &DefinitionError{Toolset: info.Name, Err: fmt.Errorf("%w: nil tool", ErrInvalidDefinition)}
		}
		if nested {
			t = inheritDefaults(t, info)
		}
		name := t.Definition().Name
		if seen[name] {
			return &DefinitionError{Toolset: info.Name, Tool: name, Err: ErrDuplicateTool}
		}
		seen[name] = true
		out.Tools = append(out.Tools, t)
	}
	out.Instructions = append(out.Instructions, p.Instructions...)
	for _, sub := range p.Toolsets {
		if err := resolveInto(ctx, sub, tc, refresh, depth+1, true, out, seen); err != nil {
			return err
		}
	}
	return nil
}

func prepareOnce(ctx context.Context, ts Toolset, tc *ToolsetContext, refresh bool) (Preparation, error) {
	if r, ok := ts.(Refresher); ok && refresh {
		return r.Refresh(ctx, tc)
	}
	return ts.Prepare(ctx, tc)
}

// inheritDefaults gives t its nested toolset's timeout and retry defaults
// when it sets none itself.
func inheritDefaults(t Tool, info ToolsetInfo) Tool {
	if info.Timeout <= 0 && info.MaxRetries == nil {
		return t
	}
	def := t.Definition()
	changed := false
	if def.Timeout == 0 && info.Timeout > 0 {
		def.Timeout, changed = info.Timeout, true
	}
	if def.MaxRetries == nil && info.MaxRetries != nil {
		n := *info.MaxRetries
		def.MaxRetries, changed = &n, true
	}
	if !changed {
		return t
	}
	return &overlay{inner: t, def: def}
}

// DynamicFuncs are the functions of a [Dynamic] toolset. Tools is
// required; the others are optional.
type DynamicFuncs struct {
	// Tools returns the tools for tc (the seed's get_tools).
	Tools func(ctx context.Context, tc *ToolsetContext) ([]Tool, error)
	// Instructions returns instruction lines for tc (get_instructions);
	// they are grouped under the toolset's name after any fixed
	// [WithInstructions] lines.
	Instructions func(ctx context.Context, tc *ToolsetContext) ([]string, error)
	// Enter and Exit, when set, make the toolset's [Enterer] and [Exiter]
	// hooks do something.
	Enter func(ctx context.Context, tc *ToolsetContext) error
	Exit  func(ctx context.Context, tc *ToolsetContext) error
}

// Dynamic is a toolset whose tools and instructions are computed from the
// [ToolsetContext] by functions: the simple dynamic inventory. Build it
// with [NewDynamic]. It implements [Enterer] and [Exiter] (no-ops when the
// functions are nil). It is safe for concurrent use if its functions are.
type Dynamic struct {
	info  ToolsetInfo
	fixed []Instruction
	f     DynamicFuncs
}

var (
	_ Toolset = (*Dynamic)(nil)
	_ Enterer = (*Dynamic)(nil)
	_ Exiter  = (*Dynamic)(nil)
)

// dynamicFields are the options [NewDynamic] accepts.
const dynamicFields = fID | fInstructions | fTimeout | fMaxRetries

// NewDynamic builds a dynamic toolset named name from f. It accepts
// [WithID], [WithInstructions] (fixed lines), [WithTimeout] and
// [WithMaxRetries]. f.Tools must not be nil.
func NewDynamic(name string, f DynamicFuncs, opts ...Option) (*Dynamic, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("toolset: %w", err)
	}
	var s settings
	if err := s.apply(opts, dynamicFields, "a dynamic toolset"); err != nil {
		return nil, fmt.Errorf("toolset %q: %w", name, err)
	}
	if f.Tools == nil {
		return nil, fmt.Errorf("toolset %q: %w: DynamicFuncs.Tools is nil", name, ErrInvalidDefinition)
	}
	return &Dynamic{info: infoFrom(name, &s), fixed: instructionsFrom(name, s.instructions), f: f}, nil
}

// Info returns the toolset's identity and defaults.
func (d *Dynamic) Info() ToolsetInfo { return d.info.clone() }

// Prepare calls the Tools and Instructions functions for tc.
func (d *Dynamic) Prepare(ctx context.Context, tc *ToolsetContext) (Preparation, error) {
	tools, err := d.f.Tools(ctx, tc)
	if err != nil {
		return Preparation{}, fmt.Errorf("toolset %q: tools: %w", d.info.Name, err)
	}
	p := Preparation{Tools: tools, Instructions: append([]Instruction(nil), d.fixed...)}
	if d.f.Instructions != nil {
		lines, err := d.f.Instructions(ctx, tc)
		if err != nil {
			return Preparation{}, fmt.Errorf("toolset %q: instructions: %w", d.info.Name, err)
		}
		p.Instructions = append(p.Instructions, instructionsFrom(d.info.Name, lines)...)
	}
	return p, nil
}

// Enter calls the Enter function, if any.
func (d *Dynamic) Enter(ctx context.Context, tc *ToolsetContext) error {
	if d.f.Enter == nil {
		return nil
	}
	return d.f.Enter(ctx, tc)
}

// Exit calls the Exit function, if any.
func (d *Dynamic) Exit(ctx context.Context, tc *ToolsetContext) error {
	if d.f.Exit == nil {
		return nil
	}
	return d.f.Exit(ctx, tc)
}
