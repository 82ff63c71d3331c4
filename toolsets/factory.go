package toolsets

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// FactoryFunc builds the toolsets visible for a context. It returns one
// of: a [Toolset] (static, dynamic or wrapped), a []Toolset, a
// [Preparation] or *Preparation (whose Toolsets may hold toolsets), or nil
// for nothing.
type FactoryFunc func(ctx context.Context, tc *ToolsetContext) (any, error)

// ErrFactoryResult reports a [FactoryFunc] that returned a value of
// another type.
var ErrFactoryResult = errors.New("toolsets: factory returned an unsupported value")

// FactoryOption configures [NewFactory].
type FactoryOption func(*FactoryToolset)

// PerRunStep says whether the factory runs at every preparation (true,
// the default) or once per run, its selection cached by run id for the
// later steps of the run (false; the seed's per_run_step=False).
func PerRunStep(perStep bool) FactoryOption {
	return func(f *FactoryToolset) { f.perStep = perStep }
}

// FactoryName sets the toolset's name (and instruction group of the
// toolsets it returns stays theirs); the default is the id, which must
// then be a valid name.
func FactoryName(name string) FactoryOption {
	return func(f *FactoryToolset) { f.info.Name = name }
}

// maxCachedRuns bounds the per-run cache of a factory; the oldest run is
// dropped past it (a runtime that never calls Exit).
const maxCachedRuns = 1024

// FactoryToolset is a toolset built by a function of the
// [ToolsetContext]: see [NewFactory]. Its Prepare resolves what the
// function returned ([Resolve]), so its preparation is always flat. The
// toolsets the function returns are prepared (and refreshed), not entered:
// a factory's own [Exit] drops the run's cached selection and calls Exit
// on the cached toolsets that are [Exiter]s.
type FactoryToolset struct {
	info    ToolsetInfo
	fn      FactoryFunc
	perStep bool

	mu    sync.Mutex
	cache map[string][]Toolset
	order []string
}

var (
	_ Toolset   = (*FactoryToolset)(nil)
	_ Refresher = (*FactoryToolset)(nil)
	_ Exiter    = (*FactoryToolset)(nil)
)

// NewFactory returns a toolset whose inventory fn builds for each
// preparation (the seed's toolset_factory). id is its durable id and is
// required. Without [PerRunStep](false) fn runs at every step.
func NewFactory(id string, fn FactoryFunc, opts ...FactoryOption) (*FactoryToolset, error) {
	if id == "" {
		return nil, fmt.Errorf("factory: %w: missing id", ErrInvalidDefinition)
	}
	if fn == nil {
		return nil, fmt.Errorf("factory %q: %w: nil function", id, ErrInvalidDefinition)
	}
	f := &FactoryToolset{info: ToolsetInfo{Name: id, ID: id}, fn: fn, perStep: true, cache: map[string][]Toolset{}}
	for _, o := range opts {
		if o != nil {
			o(f)
		}
	}
	if err := ValidateName(f.info.Name); err != nil {
		return nil, fmt.Errorf("factory %q: %w", id, err)
	}
	return f, nil
}

// Info returns the factory's name and id.
func (f *FactoryToolset) Info() ToolsetInfo { return f.info }

// PerRunStep reports whether the factory runs at every step.
func (f *FactoryToolset) PerRunStep() bool { return f.perStep }

// Prepare runs the factory (or takes the run's cached selection) and
// resolves what it returned.
func (f *FactoryToolset) Prepare(ctx context.Context, tc *ToolsetContext) (Preparation, error) {
	return f.prepare(ctx, tc, false)
}

// Refresh is Prepare, refreshing the selected toolsets ([ResolveRefresh]).
func (f *FactoryToolset) Refresh(ctx context.Context, tc *ToolsetContext) (Preparation, error) {
	return f.prepare(ctx, tc, true)
}

func (f *FactoryToolset) prepare(ctx context.Context, tc *ToolsetContext, refresh bool) (Preparation, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	sel, err := f.selection(ctx, tc)
	if err != nil {
		return Preparation{}, err
	}
	return resolve(ctx, fixed{info: f.info, p: Preparation{Toolsets: sel}}, tc, refresh)
}

func (f *FactoryToolset) selection(ctx context.Context, tc *ToolsetContext) ([]Toolset, error) {
	if !f.perStep {
		f.mu.Lock()
		sel, ok := f.cache[tc.RunID]
		f.mu.Unlock()
		if ok {
			return sel, nil
		}
	}
	v, err := f.fn(ctx, tc)
	if err != nil {
		return nil, fmt.Errorf("factory %q: %w", f.info.ID, err)
	}
	var sel []Toolset
	switch v := v.(type) {
	case nil:
	case Toolset:
		sel = []Toolset{v}
	case []Toolset:
		sel = v
	case Preparation:
		sel = []Toolset{fixed{info: f.info, p: v}}
	case *Preparation:
		if v != nil {
			sel = []Toolset{fixed{info: f.info, p: *v}}
		}
	default:
		return nil, fmt.Errorf("factory %q: %w: %T", f.info.ID, ErrFactoryResult, v)
	}
	for _, ts := range sel {
		if ts == nil {
			return nil, fmt.Errorf("factory %q: %w: a nil toolset", f.info.ID, ErrFactoryResult)
		}
	}
	if !f.perStep {
		f.mu.Lock()
		if _, ok := f.cache[tc.RunID]; !ok {
			f.order = append(f.order, tc.RunID)
		}
		f.cache[tc.RunID] = sel
		for len(f.order) > maxCachedRuns {
			delete(f.cache, f.order[0])
			f.order = f.order[1:]
		}
		f.mu.Unlock()
	}
	return sel, nil
}

// Exit drops tc's run from the cache and exits the cached toolsets that
// are [Exiter]s; errors are joined.
func (f *FactoryToolset) Exit(ctx context.Context, tc *ToolsetContext) error {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	f.mu.Lock()
	sel := f.cache[tc.RunID]
	delete(f.cache, tc.RunID)
	for i, id := range f.order {
		if id == tc.RunID {
			f.order = append(f.order[:i:i], f.order[i+1:]...)
			break
		}
	}
	f.mu.Unlock()
	var errs []error
	for _, ts := range sel {
		if x, ok := ts.(Exiter); ok {
			if err := x.Exit(ctx, tc); err != nil {
				errs = append(errs, fmt.Errorf("exit %q: %w", ts.Info().Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// fixed is a toolset that always returns p.
type fixed struct {
	info ToolsetInfo
	p    Preparation
}

func (s fixed) Info() ToolsetInfo                                             { return s.info }
func (s fixed) Prepare(context.Context, *ToolsetContext) (Preparation, error) { return s.p, nil }
