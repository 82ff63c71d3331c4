package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-run/weft/toolsets"
)

// handlerTools finds, for the error handlers of one ended run, the tool
// that declared each: among the agent's loose tools, else among the tools
// its toolsets (the agent's, then the run's own while this process still
// has them) offer when prepared for the run, the way the run's
// preparation prepares them (same ToolsetContext). It runs in the
// handlers' goroutine, never in the actor's Receive.
//
// The toolsets are prepared through lifecycles of their own, not the
// run's (which may be exiting the run concurrently, and are gone in a
// restarted process), one toolset at a time and only until the tool is
// found; close exits those that were prepared, after the handlers ran.
type handlerTools struct {
	spec *AgentSpec
	sets []toolsets.Toolset
	tc   toolsets.ToolsetContext

	next     int                      // the next toolset to prepare
	found    map[string]toolsets.Tool // tools of the prepared toolsets by name
	entered  []*toolsets.Lifecycle
	problems []string // why a toolset offered nothing
}

func newHandlerTools(spec *AgentSpec, runSets []toolsets.Toolset, tc toolsets.ToolsetContext) *handlerTools {
	ht := &handlerTools{spec: spec, tc: tc, found: map[string]toolsets.Tool{}}
	if spec != nil {
		ht.sets = append(append(ht.sets, spec.Toolsets...), runSets...)
	}
	return ht
}

// tool returns the tool named name, preparing further toolsets until one
// offers it. A toolset whose preparation fails is skipped (its failure
// named in notFound); an error is returned only when ctx ended.
func (ht *handlerTools) tool(ctx context.Context, name string) (toolsets.Tool, error) {
	if ht.spec == nil {
		return nil, nil
	}
	for _, t := range ht.spec.Tools {
		if t.Definition().Name == name {
			return t, nil
		}
	}
	for {
		if t, ok := ht.found[name]; ok {
			return t, nil
		}
		if ht.next >= len(ht.sets) {
			return nil, nil
		}
		ts := ht.sets[ht.next]
		ht.next++
		lc := newLifecycle(ts, ht.spec.PrepareTimeout)
		ht.entered = append(ht.entered, lc)
		p, rep, err := lc.Prepare(ctx, &ht.tc)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case err != nil:
			ht.problems = append(ht.problems, err.Error())
		case rep.State == toolsets.StateUnavailable:
			ht.problems = append(ht.problems, rep.Message)
		}
		for _, t := range p.Tools {
			if n := t.Definition().Name; ht.found[n] == nil {
				ht.found[n] = t
			}
		}
	}
}

// notFound is the error of a handler no tool declares.
func (ht *handlerTools) notFound(h HandlerState) error {
	err := fmt.Errorf("%w: %s of %s", errNoHandler, h.Name, h.Tool)
	if len(ht.problems) > 0 {
		err = fmt.Errorf("%w (toolsets not prepared: %s)", err, strings.Join(ht.problems, "; "))
	}
	return err
}

// close exits the toolsets prepared for the lookup; a failed exit is
// returned to be logged (the run has ended: there is nothing to fail).
func (ht *handlerTools) close() error {
	var errs []error
	for _, lc := range ht.entered {
		if _, err := lc.Exit(context.Background(), &ht.tc); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
