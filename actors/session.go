package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// storeTimeout bounds one append or read of the session actor.
const storeTimeout = 30 * time.Second

// command is a command message routed from NATS to a session actor.
type command struct {
	verb string
	data []byte
	msg  *nats.Msg
	// held: a resume that waited once for its run's tools to be prepared
	// (see holdResume); it is not held again.
	held bool
}

// advance asks the session actor to carry its active run on (recovery).
type advance struct{}

// flushTools asks the session actor to append the tool events it queued.
type flushTools struct{}

// modelReply is the outcome of a model request made by the session actor.
type modelReply struct {
	runID string
	step  int
	resp  *llm.Response
	err   error
	// rejected is why an output validator rejected the response's final
	// text, "" when none did.
	rejected string
}

// sessionActor owns one session. Its state is only the fold of the
// session's events: it appends every change with the state's version as the
// expected version, then applies it, then acts. Model requests, toolset
// preparation and tool calls run elsewhere (owned goroutines, the lifecycle
// actor, schedulers) and report back with messages, so Receive never waits
// for them; only the store appends and the stream reads happen in Receive.
//
// st is nil until the actor has read its stream (see load): a failed read
// is retried on the next command (or advance), and until one succeeds the
// actor appends nothing and refuses commands with unavailable.
type sessionActor struct {
	h       *Host
	id      string
	st      *SessionState // nil: not loaded yet (see load)
	loadErr error         // why the last load failed
	self    *actor.PID
	life    *actor.PID
	run     *runMem
	models  chan struct{} // counts model goroutines; see Stopping
	// queued are tool events (tool.started, tool.retried, tool.progress,
	// tool.returned) not appended yet: the actor appends them together
	// when it has read the tool reports already in its mailbox (a
	// flushTools message it sends itself), and before it handles any
	// other message.
	queued   []record
	flushing bool
	// down: an append found another writer's events (the fence); the
	// actor stands down and appends nothing more (see "Ownership").
	down bool
	// held are resumes waiting for their run's tools to be prepared, to
	// check reviewed arguments (see holdResume).
	held []*command
}

// runMem is what the actor keeps in memory about the active run, beside
// the state: never needed to rebuild, only to act.
type runMem struct {
	id       string
	spec     *AgentSpec
	entry    *runEntry
	prep     *Prepared // the current step's inventory; nil: prepare first
	prepStep int       // the step prep was made for
	// forBatch: prep was made to run a batch (after a resume or a
	// restart); the next model request prepares again.
	forBatch  bool
	last      *Prepared // the previous inventory, for toolset.* reports
	preparing bool
	modelBusy bool
	scheduler *actor.PID
	batch     *scheduleBatch // the running scheduler's batch
	inFlight  map[string]bool
	// lcs drive the run's toolsets (the agent's, then the run's own);
	// prepared says whether any was prepared for the run in this process
	// (so that it is exited when the run ends).
	lcs      []*toolsets.Lifecycle
	prepared bool
	meta     map[string]any
}

func newSessionActor(h *Host, id string) *sessionActor {
	return &sessionActor{h: h, id: id, models: make(chan struct{}, 1<<16)}
}

// Receive implements actor.Actor.
func (a *sessionActor) Receive(c actor.Context) {
	if a.down {
		// Stood down: refuse commands (the caller retries and reaches
		// the owner), ignore the rest until the actor stops.
		switch m := c.Message().(type) {
		case *command:
			a.onCommand(c, m)
			return
		case *actor.Stopping:
		default:
			return
		}
	}
	if a.st == nil {
		// Not loaded: the actor started, but its stream could not be
		// read. A command or an advance tries again; nothing else can
		// concern a session whose state is not known.
		switch m := c.Message().(type) {
		case *command:
			if a.load() != nil {
				a.onCommand(c, m) // refuses it: unavailable
				return
			}
			a.advance(c) // what Started does after a load
		case *advance:
			if a.load() != nil {
				return
			}
		case *actor.Started, *actor.Stopping:
		default:
			return
		}
	}
	switch c.Message().(type) {
	case *command, *advance, *preparedReply, *modelReply, *batchFinished, *exitedReply:
		a.flush(c)
	}
	switch m := c.Message().(type) {
	case *actor.Started:
		a.self = c.Self()
		a.life = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return &lifecycleActor{h: a.h} }, a.h.props...))
		if a.load() == nil {
			a.advance(c)
		}
	case *command:
		a.onCommand(c, m)
	case *advance:
		a.advance(c)
	case *preparedReply:
		a.onPrepared(c, m)
	case *exitedReply:
		a.onExited(m)
	case *modelReply:
		a.onModel(c, m)
	case *toolMsg:
		a.onTool(c, m)
	case *flushTools:
		a.flushing = false
		a.flush(c)
	case *batchFinished:
		if a.run != nil && a.run.id == m.runID {
			a.run.scheduler, a.run.batch = nil, nil
			a.advance(c)
		}
	case *actor.Stopping:
		a.refuseHeld()
		a.endRun(errors.New("session stopped"))
	}
}

// load rebuilds the state from the session's stream. On failure the state
// stays nil and loadErr says why: ErrUnavailable when the store could not
// be read (JetStream restarting, a timeout: the next command tries again),
// ErrInternal when the fold refuses the stream, ErrInternal and
// ErrSessionDamaged when the stream holds poison or the store is damaged.
func (a *sessionActor) load() error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	st := NewSessionState(a.id)
	evs, err := a.h.cfg.Store.ReadStream(ctx, events.SessionStream(a.id), 0)
	switch {
	case errors.Is(err, events.ErrStreamNotFound):
		evs = nil // a new session
	case errors.Is(err, events.ErrPoison) || errors.Is(err, events.ErrDamagedStore):
		// Retrying reads the same damage: the session is damaged.
		a.loadErr = fmt.Errorf("%w: %w", ErrSessionDamaged, err)
		a.h.log.Error("load session: damaged", "session", a.id, "err", err)
		return a.loadErr
	case err != nil:
		a.loadErr = fmt.Errorf("%w: read session: %w", ErrUnavailable, err)
		a.h.log.Warn("load session", "session", a.id, "err", err)
		return a.loadErr
	}
	for _, ev := range evs {
		if err := st.Apply(ev); err != nil {
			a.loadErr = fmt.Errorf("%w: fold session: %w", ErrInternal, err)
			a.h.log.Error("load session", "session", a.id, "err", err)
			return a.loadErr
		}
	}
	a.st, a.loadErr = st, nil
	return nil
}

// append writes recs in one append (all of them or none) with the state's
// version as the expected version, applies them, publishes them, and
// notifies the watchers of runs that settled. On a conflict it reloads the
// state from the stream.
func (a *sessionActor) append(recs ...record) error {
	if len(recs) == 0 {
		return nil
	}
	if a.down {
		return ErrSessionOwned
	}
	if a.st == nil {
		return fmt.Errorf("%w: session state not loaded", ErrUnavailable)
	}
	// The runs recs touch (almost always one) and their statuses before.
	type runStatus struct {
		id string
		st RunStatus
	}
	var before []runStatus
	for _, rec := range recs {
		if slices.ContainsFunc(before, func(b runStatus) bool { return b.id == rec.RunID }) {
			continue
		}
		b := runStatus{id: rec.RunID}
		if r := a.st.Runs[rec.RunID]; r != nil {
			b.st = r.Status
		}
		before = append(before, b)
	}
	stream := events.SessionStream(a.id)
	evs := make([]events.Event, len(recs))
	for i := range recs {
		evs[i] = recs[i].Event
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	res, err := a.h.cfg.Store.Append(ctx, stream, events.Exact(a.st.Version), evs...)
	if err != nil {
		if errors.Is(err, events.ErrWrongExpectedVersion) {
			if st, rerr := a.h.ReadSession(ctx, a.id); rerr == nil {
				a.st = st
			}
			// Another node appended: it drives the session now.
			a.down = true
			a.h.standDown(a.id, a.self)
			err = fmt.Errorf("%w: %w", ErrSessionOwned, err)
		}
		a.h.log.Error("append", "session", a.id, "err", err)
		if errors.Is(err, events.ErrPayloadTooLarge) {
			a.failTooLarge(recs, err)
		}
		return err
	}
	for i := range recs {
		if i < len(res.Blobs) && res.Blobs[i] != nil {
			// Stored by reference: the record hashes as stored.
			recs[i].Blob = res.Blobs[i]
		}
		// The same numbering and hash links the store gave the stored
		// copies (events.Chain), so that the published events are the
		// stored ones.
		recs[i].Stream, recs[i].Version = stream, res.FirstVersion+uint64(i)
		recs[i].PrevHash = a.st.LastHash
		if i > 0 && i <= len(res.Hashes) {
			recs[i].PrevHash = res.Hashes[i-1] // the store's hash of the one before
		}
		if i == len(recs)-1 {
			recs[i].Position = res.LastPosition
		}
		if err := a.st.applyRecord(recs[i]); err != nil {
			// The events are stored; the fold refusing them is a bug.
			a.h.log.Error("apply", "session", a.id, "err", err)
			return err
		}
	}
	a.h.publish(recs)
	for _, b := range before {
		r := a.st.Runs[b.id]
		if r != nil && r.Status != b.st && r.Status.Settled() {
			if o, ok := a.st.Outcome(b.id); ok {
				if m := a.run; r.Status.Ended() && m != nil && m.id == b.id && m.prepared {
					// Exit the run's toolsets first; the outcome is
					// notified once their reports are recorded.
					m.prepared = false
					tc := a.toolsetContext(m, r.Step)
					a.h.system.Root.RequestWithCustomSender(a.life, &exitRequest{lcs: m.lcs, tc: tc, outcome: o}, a.self)
				} else {
					if r.Status.Ended() {
						a.h.forgetRun(b.id)
					}
					a.h.notify(o)
				}
			}
		}
	}
	if ar := a.st.ActiveRun(); a.run != nil && (ar == nil || ar.ID != a.run.id) {
		a.endRun(errRunCancelled)
	}
	return nil
}

// failTooLarge fails the runs of recs, which the store refused as too
// large, so that none of them is left running (advance would build the
// same events again after every restart).
func (a *sessionActor) failTooLarge(recs []record, cause error) {
	if !slices.ContainsFunc(recs, func(r record) bool { return r.Type != events.TypeRunFailed }) {
		return // the refused append was only failures: nothing smaller to record
	}
	var done []string
	for _, rec := range recs {
		r := a.st.Runs[rec.RunID]
		if r == nil || r.Status.Ended() || slices.Contains(done, r.ID) {
			continue
		}
		done = append(done, r.ID)
		a.fail(r, FailPayloadTooLarge, fmt.Sprintf("the store refused the run's %s event as too large: %v", rec.Type, cause))
	}
}

// appendSteps appends recs, a sequence of which every prefix is a state
// advance can carry on from (it completes what is missing; see complete).
// On a store whose multi-event appends are costly (HostConfig.SplitAppends)
// it appends them one at a time; otherwise in one append.
func (a *sessionActor) appendSteps(recs ...record) error {
	if !a.h.cfg.SplitAppends || len(recs) < 2 {
		return a.append(recs...)
	}
	for i := range recs {
		if err := a.append(recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// endRun forgets the in-memory part of the active run and cancels whatever
// it still has running on this node. Its remote calls are cancelled only
// when the run ended (cause errRunCancelled); when this node stops driving
// the session, the node that carries the run on delivers them again.
func (a *sessionActor) endRun(cause error) {
	m := a.run
	if m == nil {
		return
	}
	a.run = nil
	if m.scheduler != nil {
		if !errors.Is(cause, errRunCancelled) {
			m.batch.handOver.Store(true)
		}
		a.h.system.Root.Stop(m.scheduler)
	}
	if m.entry != nil {
		m.entry.cancel(cause)
		a.h.runs.Delete(runKey(a.id, m.id))
	}
}

// mem returns the in-memory part of run r, creating it.
func (a *sessionActor) mem(r *RunState) (*runMem, error) {
	if a.run != nil && a.run.id == r.ID {
		return a.run, nil
	}
	a.endRun(errRunCancelled)
	spec, ok := a.h.Agent(r.Agent)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, r.Agent)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &runMem{id: r.ID, spec: spec, entry: &runEntry{ctx: ctx, cancel: cancel, meta: r.Metadata}, inFlight: map[string]bool{}, prepStep: -1, meta: r.Metadata}
	m.lcs = append(slices.Clip(spec.lifecycles), a.h.runLifecycles(r.ID, spec.PrepareTimeout)...)
	a.restoreSearch(m)
	a.run = m
	return m, nil
}

// toolsetContext is the read-only view of run m's step the toolsets are
// prepared (and exited) with.
func (a *sessionActor) toolsetContext(m *runMem, step int) toolsets.ToolsetContext {
	return toolsets.ToolsetContext{AgentID: m.spec.Name, RunID: m.id, SessionID: a.id, ConversationID: a.id, RunStep: step,
		Metadata: m.meta, WorkspaceRoot: m.spec.WorkspaceRoot, Environment: m.spec.Environment, Resources: m.spec.Resources}
}

// onExited records the closed reports of a run's toolsets, then tells the
// run's watchers how it ended.
func (a *sessionActor) onExited(m *exitedReply) {
	var recs []record
	for _, rep := range m.reports {
		recs = append(recs, reportRecord(a.id, m.runID, rep, nil, nil, nil))
	}
	_ = a.appendSteps(recs...)
	a.h.forgetRun(m.runID)
	o := m.outcome
	o.Version = a.st.Version
	a.h.notify(o)
}

// fail appends a run.failed event for run r.
func (a *sessionActor) fail(r *RunState, kind, msg string) {
	u := r.Usage
	_ = a.append(newRecord(events.TypeRunFailed, a.id, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: kind, Message: msg}, Usage: &u}))
}

// advance decides the active run's next action from the state, and starts
// it unless it is already under way. It is called after every change and
// on recovery, so a rebuilt actor carries on from wherever its log stopped.
func (a *sessionActor) advance(c actor.Context) {
	r := a.st.ActiveRun()
	if r == nil || r.Status != StatusRunning {
		return
	}
	m, err := a.mem(r)
	if err != nil {
		a.fail(r, FailInternal, err.Error())
		return
	}
	if recs := completion(a.id, r, m.prep); len(recs) > 0 {
		if m.prep == nil && len(r.Batch) < len(r.Calls) {
			a.prepare(c, m, r.Step) // tool.requested names the call's toolset
			m.forBatch = true
			return
		}
		if a.appendSteps(recs...) == nil {
			a.advance(c)
		}
		return
	}
	switch {
	case r.RetryExceeded != "":
		lim := 0
		for _, cs := range r.Batch {
			if cs.Tool == r.RetryExceeded && cs.Return != nil {
				lim = cs.Return.MaxAttempts - 1
			}
		}
		a.fail(r, FailToolRetryLimit, fmt.Sprintf("tool %q exceeded its retry budget of %d in this run", r.RetryExceeded, lim))
	case r.Final:
		out, _ := json.Marshal(r.Output)
		u := r.Usage
		done := newRecord(events.TypeRunCompleted, a.id, r.ID, "", events.RunCompleted{Output: out, Usage: &u})
		done.extra = r.Output
		_ = a.append(done)
	case r.AwaitingModel:
		if m.prep == nil {
			a.prepare(c, m, r.Step-1)
		} else if !m.modelBusy {
			a.callModel(m, r)
		}
	case r.OutputRejections > outputBudget(m.spec):
		a.fail(r, FailOutputRetryLimit, fmt.Sprintf("the run's output was rejected %d times; the budget is %d", r.OutputRejections, outputBudget(m.spec)))
	case r.NeedModel:
		if lim := m.spec.Limits.Requests; exceeds(int64(r.Step)+1, lim) {
			a.fail(r, FailUsageLimit, fmt.Sprintf("the run reached its limit of %d model requests", *lim))
			return
		}
		if m.prep != nil && m.prepStep != r.Step && len(m.lcs) == 0 {
			// Loose tools only: every preparation gives the same
			// inventory, and no toolset has anything to report.
			m.prepStep = r.Step
		}
		if m.prep == nil || m.prepStep != r.Step || (m.forBatch && !m.preparing) {
			a.prepare(c, m, r.Step)
			return
		}
		if m.preparing {
			return // the step's preparation is under way; onPrepared requests
		}
		a.requestModel(m, r)
	case len(r.Batch) > 0:
		a.runBatch(c, m, r)
	}
}

// completion returns the events a split append (appendSteps) left out of
// the stream before the process stopped: the tool.requested of the last
// response's calls that have none, then its usage.snapshot. It returns nil
// when nothing is missing.
func completion(session string, r *RunState, prep *Prepared) []record {
	if r.UsageDue == nil && len(r.Batch) == len(r.Calls) {
		return nil
	}
	var recs []record
	for _, tc := range r.Calls {
		if r.call(tc.ID) != nil {
			continue
		}
		var toolset string
		if prep != nil {
			toolset = prep.ToolsetOf[tc.Name].Name
		}
		recs = append(recs, newRecord(events.TypeToolRequested, session, r.ID, tc.ID, events.NewToolRequested(tc.Name, toolset, tc.Arguments)))
	}
	if r.UsageDue != nil {
		recs = append(recs, newRecord(events.TypeUsageSnapshot, session, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: *r.UsageDue}))
	}
	return recs
}

// prepare asks the lifecycle actor for the toolsets of step.
func (a *sessionActor) prepare(c actor.Context, m *runMem, step int) {
	if m.preparing {
		return
	}
	tc := a.toolsetContext(m, step)
	m.prepStep, m.forBatch = step, false
	if len(m.lcs) == 0 {
		// Loose tools only: no toolset's Prepare can block, so the
		// inventory is built here rather than by the lifecycle actor.
		prep, reps, err := a.h.prepareRun(context.Background(), m.spec, nil, &tc)
		m.preparing = true
		a.onPrepared(c, &preparedReply{runID: m.id, prep: prep, reports: reps, err: err})
		return
	}
	m.preparing = true
	m.prepared = true
	c.Request(a.life, &prepareRequest{spec: m.spec, lcs: m.lcs, tc: tc})
}

func (a *sessionActor) onPrepared(c actor.Context, p *preparedReply) {
	defer a.releaseHeld(c)
	m := a.run
	if m == nil || m.id != p.runID {
		return
	}
	m.preparing = false
	r := a.st.Run(m.id)
	if p.err != nil {
		u := r.Usage
		recs := toolsetReports(a.id, m.id, m.last, nil, p.reports)
		recs = append(recs, newRecord(events.TypeRunFailed, a.id, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: prepareFailKind(p.err), Message: p.err.Error()}, Usage: &u}))
		_ = a.append(recs...)
		return
	}
	reports := append(toolsetReports(a.id, m.id, m.last, p.prep, p.reports), a.searchInitialized(m)...)
	m.prep, m.last = p.prep, p.prep
	m.entry.mu.Lock()
	m.entry.reg = p.prep.Registry
	m.entry.mu.Unlock()
	a.h.runs.Store(runKey(a.id, m.id), m.entry)
	if r.NeedModel {
		a.requestModel(m, r, reports...)
		return
	}
	if err := a.appendSteps(reports...); err != nil {
		return
	}
	a.advance(c)
}

// requestModel records model.request (after the preparation's reports)
// and calls the model.
func (a *sessionActor) requestModel(m *runMem, r *RunState, reports ...record) {
	conv := a.st.Conversation(r)
	// Record the messages added since the previous request: the full
	// conversation of any request is a fold of the stream.
	added := r.Messages
	if r.Step > 0 && len(added) > 0 {
		added = added[len(added)-1:]
	} else {
		added = conv
	}
	msgs, err := json.Marshal(added)
	if err != nil {
		a.fail(r, FailInternal, "encode messages: "+err.Error())
		return
	}
	ev := newRecord(events.TypeModelRequest, a.id, r.ID, "", events.ModelRequest{Model: modelName(m.spec.Model), Messages: msgs, Tools: m.prep.Names})
	if err := a.appendSteps(append(reports, ev)...); err != nil {
		return
	}
	a.callModel(m, r)
}

func modelName(model llm.Model) string { return fmt.Sprintf("%T", model) }

// callModel runs the model request of the current step in a goroutine.
func (a *sessionActor) callModel(m *runMem, r *RunState) {
	m.modelBusy = true
	req := &llm.Request{Instructions: m.prep.Instructions, Messages: a.st.Conversation(r), Tools: m.prep.Tools,
		Settings: m.spec.Settings, Run: llm.RunInfo{SessionID: a.id, RunID: r.ID, Step: r.Step}}
	step, self, ctx, model, validators := r.Step, a.self, m.entry.ctx, m.spec.Model, m.spec.OutputValidators
	go func() {
		resp, err := model.Request(ctx, req)
		var rejected string
		if err == nil && resp != nil && len(resp.ToolCalls) == 0 {
			rejected = validateOutput(ctx, validators, resp.Text)
		}
		a.h.system.Root.Send(self, &modelReply{runID: r.ID, step: step, resp: resp, err: err, rejected: rejected})
	}()
}

func (a *sessionActor) onModel(c actor.Context, mr *modelReply) {
	m := a.run
	r := a.st.ActiveRun()
	if m == nil || r == nil || r.ID != mr.runID || m.id != mr.runID || r.Step != mr.step || !r.AwaitingModel {
		return
	}
	m.modelBusy = false
	if mr.err != nil {
		a.fail(r, FailModel, mr.err.Error())
		return
	}
	resp := mr.resp
	if err := resp.Validate(); err != nil {
		a.fail(r, FailInvalidResponse, err.Error())
		return
	}
	usage := r.Usage
	usage.Requests += resp.Usage.Requests
	usage.InputTokens += resp.Usage.InputTokens
	usage.OutputTokens += resp.Usage.OutputTokens
	message := resp.Message()
	msg, err := json.Marshal(message)
	if err != nil {
		a.fail(r, FailInternal, "encode response: "+err.Error())
		return
	}
	if lim := a.h.payload.max(); len(msg) > lim {
		u := usage
		_ = a.append(newRecord(events.TypeRunFailed, a.id, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: FailPayloadTooLarge,
			Message: fmt.Sprintf("the model response of %d bytes exceeds the limit of %d bytes", len(msg), lim)}, Usage: &u}))
		return
	}
	ids := make([]string, len(resp.ToolCalls))
	for i, tc := range resp.ToolCalls {
		ids[i] = tc.ID
	}
	ru := resp.Usage
	respRec := newRecord(events.TypeModelResponse, a.id, r.ID, "", events.ModelResponse{
		Model: resp.Model, Message: msg, FinishReason: string(resp.FinishReason), ToolCallIDs: ids,
		Usage:          &events.Usage{Requests: ru.Requests, InputTokens: ru.InputTokens, OutputTokens: ru.OutputTokens},
		OutputRejected: mr.rejected})
	respRec.extra = message
	evs := []record{respRec}
	failWith := func(kind, text string) {
		evs = append(evs, newRecord(events.TypeUsageSnapshot, a.id, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: usage}),
			newRecord(events.TypeRunFailed, a.id, r.ID, "", events.RunFailed{Error: events.ErrorInfo{Kind: kind, Message: text}, Usage: &usage}))
		_ = a.append(evs...)
	}
	lim := m.spec.Limits
	switch {
	case exceeds(usage.InputTokens, lim.InputTokens),
		exceeds(usage.OutputTokens, lim.OutputTokens),
		exceeds(usage.InputTokens+usage.OutputTokens, lim.TotalTokens):
		failWith(FailUsageLimit, "the run exceeded its token limit")
		return
	case len(resp.ToolCalls) == 0 && mr.rejected != "":
		// The output was rejected: the model gets a retry prompt.
		evs = append(evs, newRecord(events.TypeUsageSnapshot, a.id, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: usage}))
		if err := a.appendSteps(evs...); err != nil {
			return
		}
		a.advance(c)
		return
	case len(resp.ToolCalls) == 0:
		out, _ := json.Marshal(resp.Text)
		done := newRecord(events.TypeRunCompleted, a.id, r.ID, "", events.RunCompleted{Output: out, Usage: &usage})
		done.extra = resp.Text
		evs = append(evs, newRecord(events.TypeUsageSnapshot, a.id, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: usage}), done)
		_ = a.appendSteps(evs...)
		return
	case !m.prep.HasTools():
		failWith(FailNoTools, fmt.Sprintf("the model called %q but the agent has no tools", resp.ToolCalls[0].Name))
		return
	case exceeds(usage.ToolCalls+int64(len(resp.ToolCalls)), lim.ToolCalls):
		failWith(FailUsageLimit, fmt.Sprintf("the response asks for %d tool calls; the run has used %d of its limit of %d", len(resp.ToolCalls), usage.ToolCalls, *lim.ToolCalls))
		return
	}
	usage.ToolCalls += int64(len(resp.ToolCalls))
	for _, tc := range resp.ToolCalls {
		evs = append(evs, newRecord(events.TypeToolRequested, a.id, r.ID, tc.ID, events.NewToolRequested(tc.Name, m.prep.ToolsetOf[tc.Name].Name, tc.Arguments)))
	}
	evs = append(evs, newRecord(events.TypeUsageSnapshot, a.id, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: usage}))
	if err := a.appendSteps(evs...); err != nil {
		return
	}
	a.advance(c)
}

// runBatch carries the current batch on: calls that need to run are
// checked against the approval policy and handed to a scheduler; once
// nothing runs and calls wait for decisions, the run waits.
func (a *sessionActor) runBatch(c actor.Context, m *runMem, r *RunState) {
	var toRun []*CallState
	for _, cs := range r.Batch {
		approved := cs.Pending == PendingApproval && cs.Decision != nil && cs.Decision.Action == ActionApprove
		if (cs.Return == nil || approved) && !m.inFlight[cs.ID] {
			toRun = append(toRun, cs)
		}
	}
	if len(toRun) > 0 {
		if m.prep == nil {
			a.prepare(c, m, r.Step)
			m.forBatch = true
			return
		}
		if m.scheduler != nil {
			return // the running batch's scheduler finishes first
		}
		// The approval policy is checked before any call runs.
		var policy []record
		var reqs []ToolRequest
		for _, cs := range toRun {
			var approval *toolsets.Approval
			if cs.Decision != nil && cs.Decision.Action == ActionApprove {
				approval = &toolsets.Approval{DecidedBy: cs.Decision.By, Note: cs.Decision.Reason, Arguments: cs.Decision.Arguments}
			} else if ret, refused := refuseMalformed(m.prep, cs); refused {
				// Arguments that are not JSON: the model is asked again.
				policy = append(policy, returnedEvent(a.id, r.ID, ret))
				continue
			} else if gated, remote := needsApproval(m.prep, cs.Tool), a.h.IsRemoteTool(cs.Tool); gated || remote {
				if ret, refused := refuseInvalid(m.prep, cs); refused {
					// The model corrects them before anyone is asked or
					// they leave the node.
					policy = append(policy, returnedEvent(a.id, r.ID, ret))
					continue
				}
				if gated {
					policy = append(policy, returnedEvent(a.id, r.ID, policyReturn(cs)))
					continue
				}
			}
			reqs = append(reqs, ToolRequest{SessionID: a.id, RunID: r.ID, CallID: cs.ID, Name: cs.Tool, Arguments: cs.Arguments, Approval: approval,
				ModelRetries: r.Retries[cs.Tool]})
		}
		if len(policy) > 0 {
			if err := a.appendSteps(policy...); err != nil {
				return
			}
		}
		if len(reqs) > 0 {
			for _, q := range reqs {
				m.inFlight[q.CallID] = true
			}
			b := &scheduleBatch{runID: r.ID, calls: reqs, sequential: sequentialBatch(batchTools(r.Batch), m.prep.Registry.Lookup)}
			m.scheduler, m.batch = c.Spawn(actor.PropsFromProducer(func() actor.Actor { return &schedulerActor{h: a.h, batch: b} }, a.h.props...)), b
			return
		}
		if a.st.ActiveRun() != r || r.batchDone() {
			a.advance(c)
			return
		}
	}
	if len(m.inFlight) > 0 || m.scheduler != nil || r.batchDone() {
		return
	}
	// Nothing runs and calls wait: the run waits for decisions.
	var evs []record
	var ids []string
	reasons := map[PendingKind]bool{}
	for _, cs := range r.Batch {
		if cs.Pending == "" || cs.Decision != nil {
			continue
		}
		ids = append(ids, cs.ID)
		reasons[cs.Pending] = true
		if cs.Requested {
			continue
		}
		var reason string
		var meta json.RawMessage
		if ctl := cs.Return.Control; ctl != nil {
			reason = ctl.Reason
			if len(ctl.Metadata) > 0 {
				meta, _ = json.Marshal(ctl.Metadata)
			}
		}
		if cs.Pending == PendingApproval {
			evs = append(evs, newRecord(events.TypeApprovalRequested, a.id, r.ID, cs.ID, events.ApprovalRequested{Tool: cs.Tool, Arguments: reviewedArguments(cs.Arguments), Reason: reason, Metadata: meta}))
		} else {
			evs = append(evs, newRecord(events.TypeDeferredRequested, a.id, r.ID, cs.ID, events.DeferredRequested{Tool: cs.Tool, Arguments: reviewedArguments(cs.Arguments), Metadata: meta}))
		}
	}
	if len(ids) == 0 {
		return
	}
	var rs []string
	for _, k := range []PendingKind{PendingApproval, PendingDeferred} {
		if reasons[k] {
			rs = append(rs, string(k))
		}
	}
	reason := rs[0]
	if len(rs) > 1 {
		reason = rs[0] + "," + rs[1]
	}
	evs = append(evs, newRecord(events.TypeRunWaiting, a.id, r.ID, "", events.RunWaiting{Reason: reason, ToolCallIDs: ids}))
	_ = a.appendSteps(evs...)
}

// policyReturn is the return of a call the agent's approval policy stops
// before it runs.
func policyReturn(cs *CallState) toolsets.Return {
	const why = "the agent's approval policy requires approval for this tool"
	return controlReturn(cs, toolsets.KindApprovalRequired, &toolsets.Control{Message: "approval required: " + why, Reason: why})
}

func controlReturn(cs *CallState, kind toolsets.Kind, ctl *toolsets.Control) toolsets.Return {
	f := kind.Flags()
	content, _ := json.Marshal(ctl.Message)
	return toolsets.Return{CallID: cs.ID, ToolName: cs.Tool, Kind: kind, Success: f.Success, IsError: f.IsError, Content: content, Control: ctl}
}

func returnedEvent(session, run string, ret toolsets.Return) record {
	return limitedReturnedEvent(session, run, ret, 0)
}

// limitedReturnedEvent is returnedEvent for a return of a tool: one whose
// encoding is longer than limit bytes (limit > 0) is recorded as the
// execution error TooLargeReturn.
func limitedReturnedEvent(session, run string, ret toolsets.Return, limit int) record {
	b, err := json.Marshal(&ret)
	if err != nil {
		content, _ := json.Marshal("the tool's return could not be encoded: " + err.Error())
		ret = toolsets.Return{CallID: ret.CallID, ToolName: ret.ToolName, Kind: toolsets.KindUserError, IsError: true, Content: content}
		b, _ = json.Marshal(&ret)
	}
	if limit > 0 && len(b) > limit {
		ret = TooLargeReturn(ret.CallID, ret.ToolName, ret.Attempts, len(b), limit, "")
		b, _ = json.Marshal(&ret)
	}
	d := events.ToolReturned{Tool: ret.ToolName, Return: b, IsError: ret.IsError, Attempt: ret.Attempts}
	if typ, msg, ok := ret.CapturedError(); ok {
		d.Error = &events.ErrorInfo{Kind: string(ret.Kind), Message: msg, Type: typ}
	}
	rec := newRecord(events.TypeToolReturned, session, run, ret.CallID, d)
	rec.extra = ret
	return rec
}

func (a *sessionActor) onTool(c actor.Context, tm *toolMsg) {
	m := a.run
	r := a.st.ActiveRun()
	if m == nil || r == nil || m.id != tm.runID || r.ID != tm.runID {
		return
	}
	rep := tm.report
	cs := r.call(rep.CallID)
	if cs == nil || !m.inFlight[rep.CallID] {
		return // a late report of a closed call
	}
	var ev record
	switch rep.Type {
	case ReportStarted:
		ev = newRecord(events.TypeToolStarted, a.id, r.ID, cs.ID, events.ToolStarted{Tool: cs.Tool, Attempt: rep.Attempt})
	case ReportRetried:
		info := events.ErrorInfo{Message: "attempt failed"}
		if rep.Error != nil {
			info = *rep.Error
		}
		ev = newRecord(events.TypeToolRetried, a.id, r.ID, cs.ID, events.ToolRetried{Tool: cs.Tool, Attempt: rep.Attempt, Error: info})
	case ReportProgress:
		if rec, ok := searchRecord(a.id, r.ID, cs.ID, rep.Progress); ok {
			ev = rec
			break
		}
		p := events.ToolProgress{Tool: cs.Tool, Attempt: rep.Attempt}
		if rep.Progress != nil {
			p.Name, p.Data = rep.Progress.Name, rep.Progress.Data
		}
		ev = newRecord(events.TypeToolProgress, a.id, r.ID, cs.ID, p)
	case ReportReturned:
		if rep.Return == nil {
			return
		}
		delete(m.inFlight, rep.CallID)
		ret := *rep.Return
		ret.CallID, ret.ToolName = cs.ID, cs.Tool
		ev = limitedReturnedEvent(a.id, r.ID, ret, a.h.payload.max())
	default:
		return
	}
	a.queued = append(a.queued, ev)
	if !a.flushing {
		a.flushing = true
		c.Send(c.Self(), &flushTools{})
	}
}

// flush appends the queued tool events (each is a step of its own, so
// they may be split) and carries the run on when a call returned.
func (a *sessionActor) flush(c actor.Context) {
	if len(a.queued) == 0 {
		return
	}
	recs := a.queued
	a.queued = nil
	returned := slices.ContainsFunc(recs, func(r record) bool { return r.Type == events.TypeToolReturned })
	if err := a.appendSteps(recs...); err != nil {
		return
	}
	if returned {
		a.advance(c)
	}
}

func (a *sessionActor) onCommand(c actor.Context, cmd *command) {
	reply := func(r CommandReply) {
		if cmd.msg != nil {
			respond(cmd.msg, r)
		}
	}
	refuse := func(sentinel error, format string, args ...any) {
		reply(CommandReply{Error: commandError(cmd.verb, a.id, sentinel, format, args...)})
	}
	if a.st == nil {
		sentinel := ErrInternal
		switch {
		case errors.Is(a.loadErr, ErrUnavailable):
			sentinel = ErrUnavailable
		case errors.Is(a.loadErr, ErrSessionDamaged):
			sentinel = ErrSessionDamaged
		}
		refuse(sentinel, "load session: %v", a.loadErr)
		return
	}
	if a.down {
		refuse(ErrSessionOwned, "session moved to another node; retry")
		return
	}
	var runID string
	var err error
	switch cmd.verb {
	case VerbStart:
		var b StartCommand
		if err := json.Unmarshal(cmd.data, &b); err != nil || b.RunID == "" {
			refuse(ErrBadCommand, "start needs a run_id, an agent and a prompt")
			return
		}
		runID, err = a.start(b)
	case VerbResume:
		var b ResumeCommand
		if err := json.Unmarshal(cmd.data, &b); err != nil {
			refuse(ErrBadCommand, "decode resume: %v", err)
			return
		}
		if a.holdResume(c, cmd, b) {
			return // answered once the run's tools are prepared
		}
		runID, err = a.resume(b)
	case VerbCancel:
		var b CancelCommand
		if err := json.Unmarshal(cmd.data, &b); err != nil {
			refuse(ErrBadCommand, "decode cancel: %v", err)
			return
		}
		runID, err = a.cancel(b)
	default:
		refuse(ErrBadCommand, "unknown verb %q", cmd.verb)
		return
	}
	if err != nil {
		var ce *CommandError
		switch {
		case errors.As(err, &ce):
		case errors.Is(err, ErrSessionOwned):
			ce = commandError(cmd.verb, a.id, ErrSessionOwned, "%v", err)
		case errors.Is(err, ErrUnavailable):
			ce = commandError(cmd.verb, a.id, ErrUnavailable, "%v", err)
		case errors.Is(err, events.ErrPayloadTooLarge):
			ce = commandError(cmd.verb, a.id, ErrBadCommand, "%v", err)
		default:
			ce = commandError(cmd.verb, a.id, ErrInternal, "%v", err)
		}
		ce.Verb, ce.SessionID = cmd.verb, a.id
		reply(CommandReply{Error: ce})
		return
	}
	reply(CommandReply{RunID: runID, Version: a.st.Version})
	a.advance(c)
}

func (a *sessionActor) start(b StartCommand) (string, error) {
	if r := a.st.Run(b.RunID); r != nil {
		if r.Agent == b.Agent && r.Prompt == b.Prompt {
			return r.ID, nil // a retried start: already done
		}
		return "", commandError(VerbStart, a.id, ErrBadCommand, "run %q exists", b.RunID)
	}
	if _, ok := a.h.Agent(b.Agent); !ok {
		return "", commandError(VerbStart, a.id, ErrUnknownAgent, "agent %q is not registered", b.Agent)
	}
	if a.st.Active != "" {
		return "", commandError(VerbStart, a.id, ErrSessionBusy, "run %q is %s", a.st.Active, a.st.ActiveRun().Status)
	}
	input, _ := json.Marshal(b.Prompt)
	var meta json.RawMessage
	if len(b.Metadata) > 0 {
		mb, err := json.Marshal(b.Metadata)
		if err != nil {
			return "", commandError(VerbStart, a.id, ErrBadCommand, "metadata: %v", err)
		}
		meta = mb
	}
	rec := newRecord(events.TypeRunStarted, a.id, b.RunID, "", events.RunStarted{Agent: b.Agent, Input: input, Metadata: meta})
	rec.extra = b.Prompt
	return b.RunID, a.append(rec)
}

func (a *sessionActor) cancel(b CancelCommand) (string, error) {
	r := a.st.Run(b.RunID)
	if b.RunID == "" {
		r = a.st.ActiveRun()
	}
	if r == nil {
		return "", commandError(VerbCancel, a.id, ErrUnknownRun, "no run %q", b.RunID)
	}
	if r.Status.Ended() {
		return "", commandError(VerbCancel, a.id, ErrRunEnded, "run %q is %s", r.ID, r.Status)
	}
	reason := b.Reason
	if reason == "" {
		reason = "the run was cancelled"
	}
	// Close every dangling call so that the history stays valid.
	var evs []record
	for _, cs := range r.Batch {
		if cs.Done() {
			continue
		}
		evs = append(evs, returnedEvent(a.id, r.ID, controlReturn(cs, toolsets.KindCancelled, &toolsets.Control{Message: fmt.Sprintf("tool %q: cancelled: %s", cs.Tool, reason)})))
	}
	evs = append(evs, newRecord(events.TypeRunCancelled, a.id, r.ID, "", events.RunCancelled{Reason: reason, By: b.By}))
	return r.ID, a.append(evs...)
}
