package actors

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

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
	// Failed maps a toolset that is unavailable for the step to why.
	Failed map[string]string
	// Instr counts each prepared toolset's instructions.
	Instr map[string]int
	// Digests holds the digest each Digester toolset reported for the
	// step (toolsets.LifecycleReport.Digest).
	Digests map[string]string
	// Order lists the toolset names in the agent's order.
	Order []string
	// Gated maps the tools the agent's approval policy catches to the
	// entry that caught each (see approvalStep).
	Gated map[string]string
}

// HasTools reports whether the inventory offers any tool.
func (p *Prepared) HasTools() bool { return p != nil && len(p.Registry.Names()) > 0 }

// prepareRequest asks the lifecycle actor to prepare a run's toolsets.
type prepareRequest struct {
	spec *AgentSpec
	lcs  []*toolsets.Lifecycle
	tc   toolsets.ToolsetContext
}

// preparedReply is the lifecycle actor's answer: the inventory, the
// lifecycle reports of the step (one per toolset), and the error that fails
// the run (with the reports that explain it).
type preparedReply struct {
	runID   string
	prep    *Prepared
	reports []toolsets.LifecycleReport
	err     error
}

// exitRequest asks the lifecycle actor to exit a run's toolsets.
type exitRequest struct {
	lcs     []*toolsets.Lifecycle
	tc      toolsets.ToolsetContext
	outcome Outcome
	// handoff: the run goes on with another agent (session_handoff.go);
	// no outcome is told once the reports are recorded.
	handoff bool
}

// exitedReply carries the closed (or failed) reports of an exit, and the
// outcome to notify once they are recorded.
type exitedReply struct {
	runID   string
	reports []toolsets.LifecycleReport
	outcome Outcome
	handoff bool
}

// lifecycleActor prepares and exits the toolsets of a session's runs
// through their toolsets.Lifecycle drivers (enter before the first
// preparation, refresh on later ones, exit after the run, each under the
// toolset's LifecyclePolicy). Each request is served by a goroutine it
// owns, which reports back to the requester; the actor itself never
// blocks.
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
			prep, reps, err := a.h.prepareRun(context.Background(), m.spec, m.lcs, &m.tc)
			a.h.system.Root.Send(sender, &preparedReply{runID: m.tc.RunID, prep: prep, reports: reps, err: err})
		}()
	case *exitRequest:
		sender := c.Sender()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			reps := exitRun(m.lcs, &m.tc)
			a.h.system.Root.Send(sender, &exitedReply{runID: m.tc.RunID, reports: reps, outcome: m.outcome, handoff: m.handoff})
		}()
	case *actor.Stopping:
		a.wg.Wait()
	}
}

// exitRun exits every toolset of a run (each under its policy's exit
// timeout) and returns their reports, in order.
func exitRun(lcs []*toolsets.Lifecycle, tc *toolsets.ToolsetContext) []toolsets.LifecycleReport {
	out := make([]toolsets.LifecycleReport, 0, len(lcs))
	for _, lc := range lcs {
		rep, _ := lc.Exit(context.Background(), tc) // a failed exit is its report
		out = append(out, rep)
	}
	return out
}

// newLifecycle returns the driver of ts: under ts's own lifecycle policy,
// or else the default policy with the agent's PrepareTimeout as the read
// timeout.
func newLifecycle(ts toolsets.Toolset, prepareTimeout time.Duration) *toolsets.Lifecycle {
	if _, has := toolsets.PolicyOf(ts); !has && prepareTimeout > 0 {
		if w, err := toolsets.WithLifecycle(ts, toolsets.LifecyclePolicy{ReadTimeout: prepareTimeout}); err == nil {
			return toolsets.NewLifecycle(w)
		}
	}
	return toolsets.NewLifecycle(ts)
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

// prepareRun prepares every toolset of the run through its Lifecycle
// (lcs, in the agent's order, then the run's own toolsets) and builds the
// step's registry. It returns the step's lifecycle reports; an error fails
// the run (a failed or timed-out step, an unavailable toolset under
// FailWhenUnavailable, a *ToolConflictError: tools with the same name in
// two toolsets, whose later toolset's report becomes a failed one).
func (h *Host) prepareRun(ctx context.Context, spec *AgentSpec, lcs []*toolsets.Lifecycle, tc *toolsets.ToolsetContext) (*Prepared, []toolsets.LifecycleReport, error) {
	type prepared struct {
		info toolsets.ToolsetInfo
		prep toolsets.Preparation
		rep  toolsets.LifecycleReport
		at   int // the index of rep in reports
	}
	results := make([]prepared, len(lcs))
	reports := make([]toolsets.LifecycleReport, 0, len(lcs))
	keys := make([]any, 0, len(spec.Tools)+8)
	for _, t := range spec.Tools {
		keys = append(keys, t)
	}
	for i, lc := range lcs {
		info := lc.Toolset().Info()
		p, rep, err := lc.Prepare(ctx, tc)
		at := len(reports)
		if rep.State != "" {
			reports = append(reports, rep)
		}
		if err != nil {
			return nil, reports, err
		}
		results[i] = prepared{info: info, prep: p, rep: rep, at: at}
		keys = append(keys, "toolset:"+info.Name, string(rep.State))
		for _, t := range p.Tools {
			keys = append(keys, t)
		}
		for _, in := range p.Instructions {
			keys = append(keys, in)
		}
	}
	cv, _ := regCaches.LoadOrStore(spec, &regCache{})
	cache := cv.(*regCache)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if cache.prep != nil && sameKeys(cache.keys, keys) {
		return cache.prep, reports, nil
	}
	// (A cached inventory offers the same tools as a successful one: no
	// conflict.) A name offered twice fails the later toolset's report
	// and the run, naming both owners, before any registry is built.
	looseNames := make([]string, len(spec.Tools))
	for i, t := range spec.Tools {
		looseNames[i] = t.Definition().Name
	}
	sets := make([]offered, len(results))
	for i, r := range results {
		sets[i].toolset = r.info.Name
		for _, t := range r.prep.Tools {
			sets[i].tools = append(sets[i].tools, t.Definition().Name)
		}
	}
	if conflicts := toolConflicts(looseNames, sets); conflicts != nil {
		var first error
		for i, r := range results {
			cerr := conflicts[i]
			if cerr == nil {
				continue
			}
			if first == nil {
				first = cerr
			}
			failed := toolsets.LifecycleReport{Name: r.info.Name, ID: r.info.ID, State: toolsets.StateFailed,
				ToolCount: len(r.prep.Tools), InstructionCount: len(r.prep.Instructions), Message: cerr.Error()}
			if r.rep.State != "" {
				reports[r.at] = failed
			} else {
				reports = append(reports, failed)
			}
		}
		return nil, reports, first
	}
	var opts []toolsets.RegistryOption
	if spec.MaxRetries != nil {
		opts = append(opts, toolsets.WithDefaultMaxRetries(*spec.MaxRetries))
	}
	if spec.Timeout > 0 {
		opts = append(opts, toolsets.WithDefaultTimeout(spec.Timeout))
	}
	if len(spec.ToolHooks) > 0 {
		opts = append(opts, toolsets.WithHooks(spec.ToolHooks...))
	}
	toolSets := make([][]toolsets.Tool, len(results))
	for i := range results {
		toolSets[i] = results[i].prep.Tools
	}
	policyLoose, gated, err := approvalStep(spec, lcs, spec.Tools, toolSets)
	if err != nil {
		return nil, reports, err
	}
	reg := toolsets.NewRegistry(opts...)
	out := &Prepared{Registry: reg, ToolsetOf: map[string]toolsets.ToolsetInfo{}, ToolsetTools: map[string][]string{}, Failed: map[string]string{}, Instr: map[string]int{}, Digests: map[string]string{}, Gated: gated}
	loose := make([]toolsets.Tool, len(spec.Tools))
	for i, t := range policyLoose {
		loose[i] = observed{t}
	}
	if err := reg.Register(loose...); err != nil {
		return nil, reports, fmt.Errorf("register tools: %w", err)
	}
	for i, r := range results {
		r.prep.Tools = toolSets[i]
		out.Order = append(out.Order, r.info.Name)
		if r.rep.State == toolsets.StateUnavailable {
			out.Failed[r.info.Name] = r.rep.Message
		}
		out.Instr[r.info.Name] = len(r.prep.Instructions)
		if r.rep.Digest != "" {
			out.Digests[r.info.Name] = r.rep.Digest
		}
		wrapped := make([]toolsets.Tool, len(r.prep.Tools))
		names := make([]string, len(r.prep.Tools))
		for i, t := range r.prep.Tools {
			wrapped[i] = observed{t}
			names[i] = t.Definition().Name
			out.ToolsetOf[names[i]] = r.info
		}
		if err := reg.AddToolset(ctx, staticPrepared{info: r.info, prep: toolsets.Preparation{Tools: wrapped, Instructions: r.prep.Instructions}}); err != nil {
			return nil, reports, fmt.Errorf("toolset %q: %w", r.info.Name, err)
		}
		out.ToolsetTools[r.info.Name] = names
	}
	for _, d := range reg.ModelDefinitions() {
		out.Names = append(out.Names, d.Name)
		out.Tools = append(out.Tools, llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: d.Parameters, Strict: d.Strict, Metadata: d.Metadata})
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
	return out, reports, nil
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

// toolsetReports returns the toolset.* events of a step's lifecycle
// reports. initialized, unavailable, failed and closed reports are always
// recorded; a refreshed one when the toolset's tools or instructions
// changed since prev, or when prev is nil (the first preparation after a
// resume).
func toolsetReports(session, run string, prev, cur *Prepared, reps []toolsets.LifecycleReport) []record {
	var out []record
	for _, rep := range reps {
		var tools []string
		if cur != nil {
			tools = cur.ToolsetTools[rep.Name]
		}
		switch rep.State {
		case toolsets.StateRefreshed:
			var old []string
			had := false
			if prev != nil {
				old, had = prev.ToolsetTools[rep.Name]
			}
			if had && slices.Equal(old, tools) && prev.Instr[rep.Name] == rep.InstructionCount && prev.Digests[rep.Name] == rep.Digest {
				continue
			}
			var added, removed []string
			if had {
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
			}
			out = append(out, reportRecord(session, run, rep, tools, added, removed))
		case toolsets.StateUnavailable:
			if prev != nil && prev.Failed[rep.Name] == rep.Message {
				continue
			}
			out = append(out, reportRecord(session, run, rep, nil, nil, nil))
		default:
			out = append(out, reportRecord(session, run, rep, tools, nil, nil))
		}
	}
	return out
}

// reportRecord is the toolset.{state} event of a lifecycle report.
func reportRecord(session, run string, rep toolsets.LifecycleReport, tools, added, removed []string) record {
	id, st, tc, ic, msg := rep.ID, string(rep.State), rep.ToolCount, rep.InstructionCount, rep.Message
	switch rep.State {
	case toolsets.StateInitialized:
		return newRecord(events.TypeToolsetInitialized, session, run, "", events.ToolsetInitialized{Toolset: rep.Name, Tools: tools,
			ID: id, State: st, ToolCount: tc, InstructionCount: ic, Message: msg, Digest: rep.Digest})
	case toolsets.StateRefreshed:
		return newRecord(events.TypeToolsetRefreshed, session, run, "", events.ToolsetRefreshed{Toolset: rep.Name, Tools: tools, Added: added, Removed: removed,
			ID: id, State: st, ToolCount: tc, InstructionCount: ic, Message: msg, Digest: rep.Digest})
	case toolsets.StateUnavailable:
		return newRecord(events.TypeToolsetUnavailable, session, run, "", events.ToolsetUnavailable{Toolset: rep.Name, Error: events.ErrorInfo{Kind: "unavailable", Message: msg},
			ID: id, State: st, ToolCount: tc, InstructionCount: ic, Message: msg})
	case toolsets.StateClosed:
		return newRecord(events.TypeToolsetClosed, session, run, "", events.ToolsetClosed{Toolset: rep.Name, Reason: msg,
			ID: id, State: st, ToolCount: tc, InstructionCount: ic, Message: msg})
	default:
		kind := "lifecycle"
		if strings.Contains(msg, "timed out") {
			kind = "timeout"
		}
		return newRecord(events.TypeToolsetFailed, session, run, "", events.ToolsetFailed{Toolset: rep.Name, Error: events.ErrorInfo{Kind: kind, Message: msg},
			ID: id, State: string(toolsets.StateFailed), ToolCount: tc, InstructionCount: ic, Message: msg})
	}
}
