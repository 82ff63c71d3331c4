package environment

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/weft-run/weft/toolsets"
)

// FromRun returns a toolset that takes its provider from the run's
// environment ([toolsets.ToolsetContext.Environment]), which must
// implement P ([FileSystem], [Shell]), and offers the toolset build makes
// of it. It builds once per provider (up to a bound), so the same
// environment gets the same tools every step. A run whose environment is
// not a P fails its preparation with [ErrNoEnvironment]. The environment
// toolsets use it when no provider is bound to them.
func FromRun[P any](info toolsets.ToolsetInfo, build func(P) (toolsets.Toolset, error)) toolsets.Toolset {
	return &fromRun[P]{info: info, build: build, built: map[any]toolsets.Toolset{}}
}

type fromRun[P any] struct {
	info  toolsets.ToolsetInfo
	build func(P) (toolsets.Toolset, error)

	mu    sync.Mutex
	built map[any]toolsets.Toolset
}

// builtLimit bounds the providers a fromRun remembers.
const builtLimit = 64

// Info returns the toolset's identity.
func (f *fromRun[P]) Info() toolsets.ToolsetInfo { return f.info }

// Prepare returns the toolset of the run's environment, to be resolved
// for the same run (toolsets.Preparation.Toolsets).
func (f *fromRun[P]) Prepare(_ context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	var env any
	if tc != nil {
		env = tc.Environment
	}
	p, ok := env.(P)
	if !ok || env == nil {
		return toolsets.Preparation{}, fmt.Errorf("toolset %q: %w: the run's environment is %T, not a %s (attach one to the agent, or bind one to the toolset)",
			f.info.Name, ErrNoEnvironment, env, reflect.TypeFor[P]())
	}
	ts, err := f.toolsetOf(env, p)
	if err != nil {
		return toolsets.Preparation{}, err
	}
	return toolsets.Preparation{Toolsets: []toolsets.Toolset{ts}}, nil
}

func (f *fromRun[P]) toolsetOf(env any, p P) (toolsets.Toolset, error) {
	if !reflect.TypeOf(env).Comparable() {
		return f.build(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ts, ok := f.built[env]; ok {
		return ts, nil
	}
	ts, err := f.build(p)
	if err != nil {
		return nil, err
	}
	if len(f.built) >= builtLimit {
		clear(f.built)
	}
	f.built[env] = ts
	return ts, nil
}
