package toolsets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// ErrInvalidWrapper reports a wrapper built with bad arguments (an
// include list together with an exclude list, a rename onto an invalid
// name, metadata that is not JSON, …). Errors from the wrapper
// constructors match it with errors.Is, and also [ErrInvalidName] when a
// name or prefix is at fault.
var ErrInvalidWrapper = errors.New("toolsets: invalid toolset wrapper")

// MetaOriginalName is the definition metadata key under which [Renamed]
// keeps a renamed tool's original name.
const MetaOriginalName = "original_name"

// Wrapped is a toolset decorated by one of the wrappers of this package
// ([Prefixed], [Filtered], [Renamed], [Annotated], [Prepared],
// [RequireApproval], [Defer], [WithLifecycle]). It forwards the lifecycle
// hooks ([Enterer], [Refresher], [Exiter]) to the wrapped toolset, so
// wrappers chain on every toolset kind, dynamic ones included.
//
// Identity: a wrapper that changes what the model sees derives its own
// [ToolsetInfo] from the wrapped toolset's, so that one toolset attached
// twice under two prefixes has two identities: [Prefixed] names itself
// "{prefix}_{name}" with id "{prefix}_{id}" ("ws_workspace" for prefix
// "ws" over id "workspace"); [Renamed] keeps the name and derives the id
// "{id}+renamed({old}={new},…)"; [Annotated] keeps the name and derives
// "{id}+annotated({key},…)". The others only select, gate or drive the
// wrapped tools ([Filtered], [Prepared], [RequireApproval], [Defer],
// [WithLifecycle]) and keep the wrapped identity. A derived id is
// implicit when the wrapped one is ([ToolsetInfo.ImplicitID]); an empty
// id stays empty. Timeout and retry defaults are the wrapped toolset's. Its Prepare resolves the wrapped toolset's
// preparation (see [Resolve]) and then applies the wrapper: wrappers apply
// after a dynamic toolset's preparation, to the tools it produced.
//
// The tools a wrapper produces for a given inner tool are remembered, so a
// toolset that returns the same tools every step yields the same wrapped
// tools (a runtime can then reuse its compiled registry).
type Wrapped struct {
	inner  Toolset
	what   string
	apply  func(ctx context.Context, tc *ToolsetContext, p Preparation) (Preparation, error)
	policy *LifecyclePolicy
	// identity derives the wrapper's identity from the wrapped one; nil
	// keeps it.
	identity func(ToolsetInfo) ToolsetInfo
	// contextual: apply depends on the ToolsetContext, so the wrapper's
	// tools cannot be known without preparing it (see KnownTools).
	contextual bool

	mu   sync.Mutex
	memo map[Tool]Tool
}

var (
	_ Toolset   = (*Wrapped)(nil)
	_ Enterer   = (*Wrapped)(nil)
	_ Refresher = (*Wrapped)(nil)
	_ Exiter    = (*Wrapped)(nil)
)

// memoLimit bounds a wrapper's memory of wrapped tools; past it the memory
// is cleared (a dynamic toolset that builds new tools each step).
const memoLimit = 4096

func wrap(inner Toolset, what string, apply func(context.Context, *ToolsetContext, Preparation) (Preparation, error)) *Wrapped {
	return &Wrapped{inner: inner, what: what, apply: apply, memo: map[Tool]Tool{}}
}

// Info returns the wrapper's identity (derived from the wrapped
// toolset's, see [Wrapped]) and the wrapped toolset's defaults.
func (w *Wrapped) Info() ToolsetInfo {
	info := w.inner.Info()
	if w.identity != nil {
		info = w.identity(info)
	}
	return info
}

// deriveID returns id with suffix, or "" when id is empty (a toolset that
// declares no id does not get one from a wrapper).
func deriveID(id, suffix string) string {
	if id == "" {
		return ""
	}
	return id + suffix
}

// knownTools applies the wrapper to the wrapped toolset's known tools
// (see [KnownTools]); a contextual wrapper cannot be listed.
func (w *Wrapped) knownTools() ([]Tool, bool, error) {
	if w.contextual {
		return nil, false, nil
	}
	tools, ok, err := KnownTools(w.inner)
	if !ok || err != nil {
		return nil, ok, err
	}
	p, err := w.finish(context.Background(), &ToolsetContext{}, Preparation{Tools: tools})
	if err != nil {
		return nil, true, err
	}
	return p.Tools, true, nil
}

// Unwrap returns the wrapped toolset.
func (w *Wrapped) Unwrap() Toolset { return w.inner }

// Prepare resolves the wrapped toolset for tc and applies the wrapper.
func (w *Wrapped) Prepare(ctx context.Context, tc *ToolsetContext) (Preparation, error) {
	p, err := Resolve(ctx, w.inner, tc)
	if err != nil {
		return Preparation{}, err
	}
	return w.finish(ctx, tc, p)
}

// Refresh re-prepares the wrapped toolset ([ResolveRefresh]) and applies
// the wrapper.
func (w *Wrapped) Refresh(ctx context.Context, tc *ToolsetContext) (Preparation, error) {
	p, err := ResolveRefresh(ctx, w.inner, tc)
	if err != nil {
		return Preparation{}, err
	}
	return w.finish(ctx, tc, p)
}

func (w *Wrapped) finish(ctx context.Context, tc *ToolsetContext, p Preparation) (Preparation, error) {
	if w.apply == nil {
		return p, nil
	}
	out, err := w.apply(ctx, tc, p)
	if err != nil {
		return Preparation{}, fmt.Errorf("toolset %q: %s: %w", w.inner.Info().Name, w.what, err)
	}
	seen := make(map[string]bool, len(out.Tools))
	for _, t := range out.Tools {
		n := t.Definition().Name
		if seen[n] {
			return Preparation{}, &DefinitionError{Toolset: w.inner.Info().Name, Tool: n, Err: fmt.Errorf("%w (after %s)", ErrDuplicateTool, w.what)}
		}
		seen[n] = true
	}
	return out, nil
}

// Enter forwards to the wrapped toolset when it is an [Enterer].
func (w *Wrapped) Enter(ctx context.Context, tc *ToolsetContext) error {
	if e, ok := w.inner.(Enterer); ok {
		return e.Enter(ctx, tc)
	}
	return nil
}

// Exit forwards to the wrapped toolset when it is an [Exiter].
func (w *Wrapped) Exit(ctx context.Context, tc *ToolsetContext) error {
	if e, ok := w.inner.(Exiter); ok {
		return e.Exit(ctx, tc)
	}
	return nil
}

// LifecyclePolicy returns the policy set by the outermost [WithLifecycle]
// in the chain, and whether there is one.
func (w *Wrapped) LifecyclePolicy() (LifecyclePolicy, bool) {
	if w.policy != nil {
		return *w.policy, true
	}
	return PolicyOf(w.inner)
}

// wrapTool returns the remembered wrapper of t, building it on first use.
func (w *Wrapped) wrapTool(t Tool, build func(Tool) (Tool, error)) (Tool, error) {
	if !reflect.ValueOf(t).Comparable() {
		return build(t)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wt, ok := w.memo[t]; ok {
		return wt, nil
	}
	wt, err := build(t)
	if err != nil {
		return nil, err
	}
	if len(w.memo) >= memoLimit {
		clear(w.memo)
	}
	w.memo[t] = wt
	return wt, nil
}

// overlay is a tool shown under another definition; calls reach inner.
type overlay struct {
	inner Tool
	def   Definition
}

func (o *overlay) Definition() Definition { return o.def.Clone() }

// Unwrap returns the tool the overlay shows, so that what a tool declares
// beyond its definition (error handlers, live variables) is found through
// the wrappers (Find).
func (o *overlay) Unwrap() Tool { return o.inner }

func (o *overlay) Call(ctx context.Context, tc *ToolContext, args json.RawMessage) (any, error) {
	return o.inner.Call(ctx, tc, args)
}

// Prefixed exposes every tool of ts as "{prefix}_{name}" and renders its
// instruction groups as "{prefix}_{group}" (an instruction without a group
// gets prefix as its group). The prefix must be a valid name
// ([ValidateName]); a prefixed tool name longer than [MaxNameLen] fails
// the preparation. The wrapper's own name is "{prefix}_{name}" and its id
// "{prefix}_{id}" (see [Wrapped]).
func Prefixed(ts Toolset, prefix string) (*Wrapped, error) {
	if err := ValidateName(prefix); err != nil {
		return nil, fmt.Errorf("%w: prefix: %w", ErrInvalidWrapper, err)
	}
	var w *Wrapped
	w = wrap(ts, fmt.Sprintf("prefixed(%q)", prefix), func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		tools := make([]Tool, len(p.Tools))
		for i, t := range p.Tools {
			wt, err := w.wrapTool(t, func(t Tool) (Tool, error) {
				def := t.Definition()
				def.Name = prefix + "_" + def.Name
				if err := ValidateName(def.Name); err != nil {
					return nil, err
				}
				return &overlay{inner: t, def: def}, nil
			})
			if err != nil {
				return Preparation{}, err
			}
			tools[i] = wt
		}
		ins := make([]Instruction, len(p.Instructions))
		for i, in := range p.Instructions {
			in.Group = prefixGroup(prefix, in.Group)
			ins[i] = in
		}
		return Preparation{Tools: tools, Instructions: ins}, nil
	})
	w.identity = func(i ToolsetInfo) ToolsetInfo {
		i.Name = prefix + "_" + i.Name
		if i.ID != "" {
			i.ID = prefix + "_" + i.ID
		}
		return i
	}
	return w, nil
}

func prefixGroup(prefix, group string) string {
	if group == "" {
		return prefix
	}
	return prefix + "_" + group
}

// Filter selects the tools [Filtered] keeps. Include and Exclude are tool
// names as the wrapped toolset exposes them; at most one of them may be
// set. Predicate, when set, is applied too (after the lists) to each
// prepared definition. At least one of the three must be set.
type Filter struct {
	// Include keeps only the named tools.
	Include []string
	// Exclude removes the named tools.
	Exclude []string
	// Predicate keeps the tools it returns true for; it must not retain
	// the definition it is given.
	Predicate func(Definition) bool
}

// Filtered keeps the tools of ts that f selects. Instructions are kept.
func Filtered(ts Toolset, f Filter) (*Wrapped, error) {
	switch {
	case len(f.Include) > 0 && len(f.Exclude) > 0:
		return nil, fmt.Errorf("%w: filter with both an include and an exclude list", ErrInvalidWrapper)
	case len(f.Include) == 0 && len(f.Exclude) == 0 && f.Predicate == nil:
		return nil, fmt.Errorf("%w: filter with no include list, exclude list or predicate", ErrInvalidWrapper)
	}
	include, exclude := setOf(f.Include), setOf(f.Exclude)
	return wrap(ts, "filtered", func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		var tools []Tool
		for _, t := range p.Tools {
			def := t.Definition()
			switch {
			case include != nil && !include[def.Name]:
				continue
			case exclude[def.Name]:
				continue
			case f.Predicate != nil && !f.Predicate(def):
				continue
			}
			tools = append(tools, t)
		}
		return Preparation{Tools: tools, Instructions: p.Instructions}, nil
	}), nil
}

func setOf(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Renamed exposes selected tools of ts under new names (old name → new
// name). Calls to the new name reach the original tool, and the original
// name is kept in the definition's metadata under [MetaOriginalName].
// Tools not named in renames are unchanged; names in renames that the
// toolset does not produce are ignored (a dynamic toolset may produce them
// later). New names must be valid and distinct; a new name that collides
// with another tool fails the preparation. The wrapper's id is derived
// from the wrapped one (see [Wrapped]).
func Renamed(ts Toolset, renames map[string]string) (*Wrapped, error) {
	if len(renames) == 0 {
		return nil, fmt.Errorf("%w: rename with no names", ErrInvalidWrapper)
	}
	targets := map[string]string{}
	for _, old := range slices.Sorted(maps.Keys(renames)) {
		nw := renames[old]
		if err := ValidateName(nw); err != nil {
			return nil, fmt.Errorf("%w: rename %q: %w", ErrInvalidWrapper, old, err)
		}
		if prev, dup := targets[nw]; dup {
			return nil, fmt.Errorf("%w: %q and %q are both renamed to %q", ErrInvalidWrapper, prev, old, nw)
		}
		targets[nw] = old
	}
	renames = maps.Clone(renames)
	pairs := make([]string, 0, len(renames))
	for _, old := range slices.Sorted(maps.Keys(renames)) {
		pairs = append(pairs, old+"="+renames[old])
	}
	suffix := "+renamed(" + strings.Join(pairs, ",") + ")"
	var w *Wrapped
	w = wrap(ts, "renamed", func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		tools := make([]Tool, len(p.Tools))
		for i, t := range p.Tools {
			wt, err := w.wrapTool(t, func(t Tool) (Tool, error) {
				def := t.Definition()
				nw, ok := renames[def.Name]
				if !ok {
					return t, nil
				}
				def.Metadata = maps.Clone(def.Metadata)
				if def.Metadata == nil {
					def.Metadata = map[string]any{}
				}
				def.Metadata[MetaOriginalName] = def.Name
				def.Name = nw
				return &overlay{inner: t, def: def}, nil
			})
			if err != nil {
				return Preparation{}, err
			}
			tools[i] = wt
		}
		return Preparation{Tools: tools, Instructions: p.Instructions}, nil
	})
	w.identity = func(i ToolsetInfo) ToolsetInfo { i.ID = deriveID(i.ID, suffix); return i }
	return w, nil
}

// Annotated merges metadata into the definition of every tool of ts (the
// seed's with_metadata); on a key present in both, metadata wins. It must
// encode as JSON. metadata is copied. The wrapper's id is derived from
// the wrapped one (see [Wrapped]).
func Annotated(ts Toolset, metadata map[string]any) (*Wrapped, error) {
	if len(metadata) == 0 {
		return nil, fmt.Errorf("%w: no metadata", ErrInvalidWrapper)
	}
	if _, err := json.Marshal(metadata); err != nil {
		return nil, fmt.Errorf("%w: metadata is not JSON: %v", ErrInvalidWrapper, err)
	}
	metadata = maps.Clone(metadata)
	suffix := "+annotated(" + strings.Join(slices.Sorted(maps.Keys(metadata)), ",") + ")"
	var w *Wrapped
	w = wrap(ts, "annotated", func(_ context.Context, _ *ToolsetContext, p Preparation) (Preparation, error) {
		tools := make([]Tool, len(p.Tools))
		for i, t := range p.Tools {
			tools[i], _ = w.wrapTool(t, func(t Tool) (Tool, error) {
				def := t.Definition()
				merged := maps.Clone(def.Metadata)
				if merged == nil {
					merged = map[string]any{}
				}
				maps.Copy(merged, metadata)
				def.Metadata = merged
				return &overlay{inner: t, def: def}, nil
			})
		}
		return Preparation{Tools: tools, Instructions: p.Instructions}, nil
	})
	w.identity = func(i ToolsetInfo) ToolsetInfo { i.ID = deriveID(i.ID, suffix); return i }
	return w, nil
}

// PrepareFunc inspects, and may replace, the definitions a toolset exposes
// for one context. It returns the definitions to expose: a subset of defs,
// in any order, each possibly changed (description, metadata, strict, …)
// but keeping its name, which identifies the tool. Returning nil keeps
// defs unchanged; returning an empty non-nil slice exposes no tools.
type PrepareFunc func(ctx context.Context, tc *ToolsetContext, defs []Definition) ([]Definition, error)

// Prepared calls fn with the definitions of ts for each preparation and
// exposes what it returns (see [PrepareFunc]). A definition naming a tool
// that is not in defs, or named twice, fails the preparation.
func Prepared(ts Toolset, fn PrepareFunc) (*Wrapped, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: nil prepare function", ErrInvalidWrapper)
	}
	w := wrap(ts, "prepared", func(ctx context.Context, tc *ToolsetContext, p Preparation) (Preparation, error) {
		defs := make([]Definition, len(p.Tools))
		byName := make(map[string]Tool, len(p.Tools))
		for i, t := range p.Tools {
			defs[i] = t.Definition()
			byName[defs[i].Name] = t
		}
		orig := make([]Definition, len(defs))
		for i, d := range defs {
			orig[i] = d.Clone()
		}
		got, err := fn(ctx, tc, defs)
		if err != nil {
			return Preparation{}, err
		}
		if got == nil {
			return p, nil
		}
		origByName := make(map[string]Definition, len(orig))
		for _, d := range orig {
			origByName[d.Name] = d
		}
		tools := make([]Tool, 0, len(got))
		used := map[string]bool{}
		for _, d := range got {
			t, ok := byName[d.Name]
			if !ok {
				return Preparation{}, fmt.Errorf("%w: the prepare function returned %q, which is not one of the toolset's tools (it may not rename)", ErrInvalidWrapper, d.Name)
			}
			if used[d.Name] {
				return Preparation{}, fmt.Errorf("%w: the prepare function returned %q twice", ErrInvalidWrapper, d.Name)
			}
			used[d.Name] = true
			if !reflect.DeepEqual(d, origByName[d.Name]) {
				t = &overlay{inner: t, def: d.Clone()}
			}
			tools = append(tools, t)
		}
		return Preparation{Tools: tools, Instructions: p.Instructions}, nil
	})
	w.contextual = true
	return w, nil
}

// WithLifecycle attaches policy to ts: [Lifecycle] (and so the runtime)
// drives the toolset with it. The outermost WithLifecycle of a chain wins.
// The policy is checked ([LifecyclePolicy.Validate]).
func WithLifecycle(ts Toolset, policy LifecyclePolicy) (*Wrapped, error) {
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidWrapper, err)
	}
	w := wrap(ts, "with_lifecycle", nil)
	w.policy = &policy
	return w, nil
}

// Chain applies wrappers one after the other: Wrap(ts).Prefixed("ws").
// Filtered(…).Toolset(). The first error stops the chain and is returned
// by [Chain.Toolset]. The zero value is not usable; start with [Wrap].
type Chain struct {
	ts  Toolset
	err error
}

// Wrap starts a wrapper chain over ts.
func Wrap(ts Toolset) *Chain {
	c := &Chain{ts: ts}
	if ts == nil {
		c.err = fmt.Errorf("%w: nil toolset", ErrInvalidWrapper)
	}
	return c
}

func (c *Chain) then(f func(Toolset) (*Wrapped, error)) *Chain {
	if c.err != nil {
		return c
	}
	w, err := f(c.ts)
	if err != nil {
		return &Chain{err: err}
	}
	return &Chain{ts: w}
}

// Prefixed applies [Prefixed].
func (c *Chain) Prefixed(prefix string) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Prefixed(ts, prefix) })
}

// Filtered applies [Filtered].
func (c *Chain) Filtered(f Filter) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Filtered(ts, f) })
}

// Renamed applies [Renamed].
func (c *Chain) Renamed(renames map[string]string) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Renamed(ts, renames) })
}

// WithMetadata applies [Annotated].
func (c *Chain) WithMetadata(metadata map[string]any) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Annotated(ts, metadata) })
}

// Prepared applies [Prepared].
func (c *Chain) Prepared(fn PrepareFunc) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Prepared(ts, fn) })
}

// ApprovalRequired applies [RequireApproval].
func (c *Chain) ApprovalRequired(entries []string, reason string) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return RequireApproval(ts, entries, reason) })
}

// Deferred applies [Defer].
func (c *Chain) Deferred(entries []string, reason string) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return Defer(ts, entries, reason) })
}

// WithLifecycle applies [WithLifecycle].
func (c *Chain) WithLifecycle(policy LifecyclePolicy) *Chain {
	return c.then(func(ts Toolset) (*Wrapped, error) { return WithLifecycle(ts, policy) })
}

// Toolset returns the wrapped toolset, or the first error of the chain.
func (c *Chain) Toolset() (Toolset, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.ts, nil
}
