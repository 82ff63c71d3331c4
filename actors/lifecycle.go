package actors

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Prepared is a run's tool inventory for one step: the registry that
// executes its calls, the model-facing definitions and the instructions.
type Prepared struct {
	Registry     *toolsets.Registry
	Instructions string
	Tools        []llm.ToolDefinition
	// Names are the model-visible tool names, in registration order.
	Names []string
	// ToolsetOf maps a tool name to its toolset; loose tools are absent.
	ToolsetOf map[string]toolsets.ToolsetInfo
	// ToolsetTools maps each prepared toolset's name to its tool names.
	ToolsetTools map[string][]string
	// Failed maps a toolset that failed to prepare to its error.
	Failed map[string]string
	// Order lists the toolset names in the agent's order.
	Order []string
}

// HasTools reports whether the inventory offers any tool.
func (p *Prepared) HasTools() bool { return p != nil && len(p.Registry.Names()) > 0 }

// prepareRequest asks the lifecycle actor to prepare a run's toolsets.
type prepareRequest struct {
	spec *AgentSpec
	tc   toolsets.ToolsetContext
}

// preparedReply is the lifecycle actor's answer.
type preparedReply struct {
	runID string
	prep  *Prepared
	err   error
}

// lifecycleActor prepares the toolsets of a session's runs. Each request is
// served by a goroutine it owns, which reports back with a preparedReply to
// the requester; the actor itself never blocks.
//
// Issue 5's lifecycle policies (enter / refresh / exit hooks of dynamic
// toolsets) belong here: prepareRun is the one place where toolsets are
// prepared, and the session actor turns the differences between two
// preparations into toolset.* events.
type lifecycleActor struct {
	h  *Host
	wg sync.WaitGroup
}

// Receive implements actor.Actor.
func (a *lifecycleActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *prepareRequest:
		sender := c.Sender()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			prep, err := a.h.prepareRun(context.Background(), m.spec, &m.tc)
			a.h.system.Root.Send(sender, &preparedReply{runID: m.tc.RunID, prep: prep, err: err})
		}()
	case *actor.Stopping:
		a.wg.Wait()
	}
}

// regCache remembers the last inventory built for an agent, so that a
// preparation that returns the very same tools reuses the registry
// (compiling schemas is the expensive part of building one).
type regCache struct {
	mu   sync.Mutex
	keys []any
	prep *Prepared
}

var regCaches sync.Map // *AgentSpec → *regCache

// prepareRun prepares every toolset of spec for tc (each under the agent's
// prepare timeout), and builds the step's registry.
func (h *Host) prepareRun(ctx context.Context, spec *AgentSpec, tc *toolsets.ToolsetContext) (*Prepared, error) {
	timeout := spec.PrepareTimeout
	if timeout <= 0 {
		timeout = DefaultPrepareTimeout
	}
	type prepared struct {
		info toolsets.ToolsetInfo
		prep toolsets.Preparation
		err  error
	}
	results := make([]prepared, len(spec.Toolsets))
	keys := make([]any, 0, len(spec.Tools)+8)
	for _, t := range spec.Tools {
		keys = append(keys, t)
	}
	for i, ts := range spec.Toolsets {
		info := ts.Info()
		pctx, cancel := context.WithTimeout(ctx, timeout)
		p, err := ts.Prepare(pctx, tc)
		cancel()
		results[i] = prepared{info: info, prep: p, err: err}
		keys = append(keys, "toolset:"+info.Name)
		if err == nil {
			for _, t := range p.Tools {
				keys = append(keys, t)
			}
			for _, in := range p.Instructions {
				keys = append(keys, in)
			}
		}
	}
	cv, _ := regCaches.LoadOrStore(spec, &regCache{})
	cache := cv.(*regCache)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.prep != nil && sameKeys(cache.keys, keys) {
		return cache.prep, nil
	}
	var opts []toolsets.RegistryOption
	if spec.MaxRetries != nil {
		opts = append(opts, toolsets.WithDefaultMaxRetries(*spec.MaxRetries))
	}
	if spec.Timeout > 0 {
		opts = append(opts, toolsets.WithDefaultTimeout(spec.Timeout))
	}
	reg := toolsets.NewRegistry(opts...)
	out := &Prepared{Registry: reg, ToolsetOf: map[string]toolsets.ToolsetInfo{}, ToolsetTools: map[string][]string{}, Failed: map[string]string{}}
	loose := make([]toolsets.Tool, len(spec.Tools))
	for i, t := range spec.Tools {
		loose[i] = observed{t}
	}
	if err := reg.Register(loose...); err != nil {
		return nil, fmt.Errorf("register tools: %w", err)
	}
	for _, r := range results {
		out.Order = append(out.Order, r.info.Name)
		if r.err != nil {
			out.Failed[r.info.Name] = r.err.Error()
			continue
		}
		wrapped := make([]toolsets.Tool, len(r.prep.Tools))
		names := make([]string, len(r.prep.Tools))
		for i, t := range r.prep.Tools {
			wrapped[i] = observed{t}
			names[i] = t.Definition().Name
			out.ToolsetOf[names[i]] = r.info
		}
		if err := reg.AddToolset(ctx, staticPrepared{info: r.info, prep: toolsets.Preparation{Tools: wrapped, Instructions: r.prep.Instructions}}); err != nil {
			return nil, fmt.Errorf("toolset %q: %w", r.info.Name, err)
		}
		out.ToolsetTools[r.info.Name] = names
	}
	for _, d := range reg.ModelDefinitions() {
		out.Names = append(out.Names, d.Name)
		out.Tools = append(out.Tools, llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: d.Parameters, Strict: d.Strict})
	}
	var b strings.Builder
	for _, in := range spec.Instructions {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(in)
	}
	if ti := reg.Instructions(); ti != "" {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(ti)
	}
	out.Instructions = b.String()
	cache.keys, cache.prep = keys, out
	return out, nil
}

// staticPrepared hands an already prepared inventory to Registry.AddToolset.
type staticPrepared struct {
	info toolsets.ToolsetInfo
	prep toolsets.Preparation
}

func (s staticPrepared) Info() toolsets.ToolsetInfo { return s.info }
func (s staticPrepared) Prepare(context.Context, *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	return s.prep, nil
}

// sameKeys compares two inventories by identity; values of types that are
// not comparable never match (the registry is rebuilt).
func sameKeys(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == nil || b[i] == nil {
			return false
		}
		ta, tb := reflect.TypeOf(a[i]), reflect.TypeOf(b[i])
		if ta != tb || !ta.Comparable() {
			return false
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// toolsetReports returns the toolset.* events of a preparation: initialized
// for every toolset on a run's first preparation (prev nil), refreshed when a
// toolset's tools changed since prev, failed for a toolset that could not be
// prepared.
func toolsetReports(session, run string, prev, cur *Prepared) []record {
	var out []record
	for _, name := range cur.Order {
		if msg, failed := cur.Failed[name]; failed {
			if prev == nil || prev.Failed[name] != msg {
				out = append(out, newRecord(events.TypeToolsetFailed, session, run, "", events.ToolsetFailed{Toolset: name, Error: events.ErrorInfo{Kind: "prepare", Message: msg}}))
			}
			continue
		}
		tools := cur.ToolsetTools[name]
		if prev == nil {
			out = append(out, newRecord(events.TypeToolsetInitialized, session, run, "", events.ToolsetInitialized{Toolset: name, Tools: tools}))
			continue
		}
		old, had := prev.ToolsetTools[name]
		if !had {
			out = append(out, newRecord(events.TypeToolsetInitialized, session, run, "", events.ToolsetInitialized{Toolset: name, Tools: tools}))
			continue
		}
		if slices.Equal(old, tools) {
			continue
		}
		var added, removed []string
		for _, t := range tools {
			if !slices.Contains(old, t) {
				added = append(added, t)
			}
		}
		for _, t := range old {
			if !slices.Contains(tools, t) {
				removed = append(removed, t)
			}
		}
		out = append(out, newRecord(events.TypeToolsetRefreshed, session, run, "", events.ToolsetRefreshed{Toolset: name, Tools: tools, Added: added, Removed: removed}))
	}
	return out
}
