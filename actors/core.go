package actors

import (
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// The session core: the session actor's decisions as pure functions.
//
// Given the session's state (the fold, *SessionState), the in-process facts
// of its active run (runFacts: what the log does not hold), a few pure
// lookups and one input — a command, a model reply, a tool report, a
// prepared inventory, an advance — the core returns a decision: the events
// to append, the effects to perform once they are appended, and whether to
// ask it again (carry on). It touches no actor, store, clock or goroutine;
// the session actor (session.go, the shell) appends, applies and performs.
// One concept per file: core_command.go (commands), core_model.go (model
// requests and replies), core_batch.go (batches, approvals, deferred
// calls), core_tool.go (tool reports), core_recovery.go (advance: what the
// run does next, completion of split appends), core_limits.go (limits and
// budgets).

// lookups are the pure lookups the core needs from the host: the
// registered agents and which tools remote workers serve (Host implements
// it).
type lookups interface {
	Agent(name string) (*AgentSpec, bool)
	AgentVersion(name, version string) (*AgentSpec, bool)
	IsRemoteTool(name string) bool
}

// core is one question to the session core: the state and facts it is
// asked about. Its methods are the inputs; each returns a decision and
// changes nothing it was given.
type core struct {
	session string
	st      *SessionState
	// f are the facts of the active run (the zero value when the shell
	// keeps none: no run, or one this process has not begun to drive).
	f      runFacts
	look   lookups
	maxMsg int // the largest model message and tool return, encoded (PayloadLimits.max)
	// handling are the error handlers under way in this process
	// (core_handlers.go), by HandlerState.key.
	handling map[string]bool
}

// runFacts are the in-process facts of the active run that are not in the
// log: what is prepared and what is under way. The shell keeps them (a
// plain value, replaced by decisions and by the effects it performs, see
// performed); a rebuilt actor starts with none, and the core prepares
// again.
type runFacts struct {
	run  string
	spec *AgentSpec
	// toolsets: the run has toolsets (the agent's or its own), which the
	// lifecycle actor prepares; without, an inventory is built in place.
	toolsets bool
	prep     *Prepared // the current step's inventory; nil: prepare first
	prepStep int       // the step prep was made for
	// forBatch: prep was made to run a batch (after a resume or a
	// restart); the next model request prepares again.
	forBatch  bool
	last      *Prepared // the previous inventory, for toolset.* reports
	preparing bool
	modelBusy bool
	batching  bool // a batch's scheduler runs
	// inFlight are the calls dispatched that have not returned. The core
	// never writes the map: a dispatch puts a new one under way
	// (performed), and a decision names the call that returned
	// (decision.returned), which the shell drops.
	inFlight map[string]bool
}

// decision is what the core decided on one input.
type decision struct {
	// facts replace the run's facts at once, before the append, when
	// newFacts is set.
	facts    runFacts
	newFacts bool
	// recs are the events to append: in one append, or with split one
	// step at a time (appendSteps). With queue they are tool events the
	// shell queues and appends with the reports already in its mailbox.
	recs  []record
	split bool
	queue bool
	// returned is the call whose return recs record: no longer in
	// flight once the decision is taken ("" for none).
	returned string
	// effects run in order once recs are appended (a failed append
	// performs none, and answers a waiting command with its error).
	effects effects
	// carryOn asks the core again (advance) once the effects ran.
	carryOn bool
}

// effect is something the shell does for a decision.
type effect interface{ isEffect() }

// effects are a decision's effects in order: the first in place (a
// decision has one or none but for a few), the rest in more.
type effects struct {
	first effect
	more  []effect
}

// one is the effects of a decision with one effect.
func one(e effect) effects { return effects{first: e} }

// effectsOf is the effects es, in order.
func effectsOf(es []effect) effects {
	if len(es) == 0 {
		return effects{}
	}
	return effects{first: es[0], more: es[1:]}
}

// add returns es with e after its effects.
func (es effects) add(e effect) effects {
	if es.first == nil {
		return one(e)
	}
	es.more = append(es.more, e)
	return es
}

func (es effects) len() int {
	if es.first == nil {
		return 0
	}
	return 1 + len(es.more)
}

// at is the i-th effect.
func (es effects) at(i int) effect {
	if i == 0 {
		return es.first
	}
	return es.more[i-1]
}

// effReply answers the command the decision is about: its run id and the
// session's version after the append, or err (a *CommandError, or an
// error the shell maps to one).
type effReply struct {
	runID string
	err   error
}

// effHold holds the command (a resume) until the preparation the next
// effect starts is over; it is then handled again, once.
type effHold struct{}

// effPrepare prepares the tools of run for step. forBatch: the inventory
// is for running a batch (the next model request prepares again).
type effPrepare struct {
	run      string
	step     int
	forBatch bool
}

// effCallModel makes the model request of step req.Run.Step.
type effCallModel struct{ req *llm.Request }

// effDispatch runs a batch of calls: all at once, or one at a time in
// model order when sequential. batch is every call of the run's current
// response, for RunBatch.
type effDispatch struct {
	run        string
	calls      []ToolRequest
	batch      []BatchCall
	sequential bool
}

func (effReply) isEffect()     {}
func (effHold) isEffect()      {}
func (effPrepare) isEffect()   {}
func (effCallModel) isEffect() {}
func (effDispatch) isEffect()  {}

// performed returns the facts once the shell performed e: a preparation
// or a model request under way, calls in flight.
func (f runFacts) performed(e effect) runFacts {
	switch e := e.(type) {
	case effPrepare:
		f.prepStep, f.forBatch, f.preparing = e.step, false, true
	case effCallModel:
		f.modelBusy = true
	case effDispatch:
		in := make(map[string]bool, len(f.inFlight)+len(e.calls))
		for id := range f.inFlight {
			in[id] = true
		}
		for _, q := range e.calls {
			in[q.CallID] = true
		}
		f.inFlight, f.batching = in, true
	}
	return f
}

// with returns d with the facts f.
func (d decision) with(f runFacts) decision {
	d.facts, d.newFacts = f, true
	return d
}

// fail is the decision that fails run r with kind and msg.
func (k core) fail(r *RunState, kind, msg string) decision {
	return decision{recs: []record{k.failRecord(r, r.Usage, kind, msg)}}
}

func (k core) failRecord(r *RunState, u events.Usage, kind, msg string) record {
	return newRecord(events.TypeRunFailed, k.session, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: kind, Message: msg}, Usage: &u})
}

// prepare is the decision that prepares the tools of run r for step,
// unless a preparation is under way already (forBatch is then noted).
func (k core) prepare(r *RunState, step int, forBatch bool) decision {
	if k.f.preparing {
		if !forBatch {
			return decision{}
		}
		f := k.f
		f.forBatch = true
		return decision{}.with(f)
	}
	return decision{effects: one(effPrepare{run: r.ID, step: step, forBatch: forBatch})}
}

// unknownAgent is why a run whose agent this host lacks fails.
func unknownAgent(name string) string { return fmt.Sprintf("%v: %q", ErrUnknownAgent, name) }
