package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// HostConfig configures a Host.
type HostConfig struct {
	// Conn is the NATS connection commands, tool calls and (when
	// PublishEvents) events travel on. The caller owns and closes it.
	Conn *nats.Conn
	// Store is the event log. The caller owns and closes it.
	Store events.Store
	// Subjects is the subject scheme; zero means bus.Default.
	Subjects bus.Subjects
	// PublishEvents publishes the live copy of every appended event (its
	// private surfaces redacted, see events.Redact) on its event subject.
	// The runtime sets it for every store: the JetStream store stores its
	// events on the log's subjects, which are not the event subjects.
	PublishEvents bool
	// Interest reports whether anyone subscribes to an event subject (the
	// embedded server knows: bus.Server.Interest); the live copy of an
	// event nobody listens to is not built. nil: every copy is published.
	// The subject is the host's buffer, reused once Interest returns: an
	// implementation that keeps it copies it.
	Interest func(subject []byte) bool
	// SessionIdle is how long the actor of a settled session waits for a
	// message before it stops, to be rebuilt from the log on its next
	// command (see passivate.go); zero means DefaultSessionIdle.
	SessionIdle time.Duration
	// Logger receives the host's diagnostics; nil discards them.
	Logger *slog.Logger
	// Leases makes the host one node of a cluster (see "Ownership" in the
	// package doc): it serves commands in queue group CommandQueueGroup,
	// acts only on sessions whose lease it holds, and forwards the others
	// to their owner. Nil: the host acts on every command it receives (a
	// single node). The caller owns it.
	Leases *Leases
	// WorkerQueueWait is how long a call of a pooled remote tool may wait
	// in its pool's queue before the host takes it back and fails it; zero
	// means DefaultWorkerQueueWait.
	WorkerQueueWait time.Duration
	// MaxPayloadBytes is the largest tool result, tool arguments and
	// model message the host accepts, encoded (see "Payloads too large for
	// the bus" in payload.go); zero means DefaultMaxPayloadBytes. A store
	// with a lower limit (a MaxDataBytes method: EventStoreDB's 1 MiB by
	// default) lowers it to that, less 4 KiB. A larger tool result returns
	// as an execution error; a larger model response fails the run with
	// FailPayloadTooLarge.
	MaxPayloadBytes int
	// Blobs keeps tool calls and reports too large for a NATS message;
	// nil means Store when it is an events.BlobStore (the JetStream store
	// and memstore are), else none: a call or result too large for a
	// message then returns as an execution error.
	Blobs events.BlobStore
	// Observer sees appends, remote deliveries and takeovers (telemetry);
	// nil: none, at no cost.
	Observer Observer
}

// Host runs the actors of one process: an actor system, the session actors
// of the sessions it owns, and a tool host that serves the calls of the
// local tools of the runs it prepared, on weft.node.<node id>.tool.* (only
// the node that prepared a run has its tools). Create it with NewHost; Close stops it.
type Host struct {
	cfg    HostConfig
	subj   bus.Subjects
	log    *slog.Logger
	system *actor.ActorSystem
	subs   []*nats.Subscription

	mu       sync.Mutex
	agents   map[string]*agentVersions
	sessions map[string]sessionRef
	watchers map[string][]chan Outcome
	// observers hear every outcome notify tells (OnSettled).
	observers []func(Outcome)
	closed    bool
	done      chan struct{} // closed when Close begins
	// life is the host's lifetime, cancelled when Close begins: it ends
	// the waits of the goroutines that forward commands (see forward).
	life    context.Context
	endLife context.CancelFunc
	// storeLife is the lifetime of the session actors' store calls (see
	// storeCtx), which Close ends once its grace for them has passed
	// (see stopSessions).
	storeLife context.Context
	endStore  context.CancelFunc

	runs sync.Map // runKey → *runEntry
	// runToolsets are toolsets attached to one run (run id →
	// []toolsets.Toolset), runLCs their drivers (run id →
	// []*toolsets.Lifecycle).
	runToolsets, runLCs sync.Map
	own                 *ownership // nil without HostConfig.Leases

	// Tool reports arrive on one subscription, bus.ReplyFilter(replyPrefix);
	// each scheduler has its own subject under it (bus.ReplySubject).
	replyPrefix string
	replySeq    atomic.Uint64
	replies     sync.Map // reply subject → *actor.PID of its scheduler
	// payload limits the messages of tool calls (see payload.go).
	payload PayloadLimits

	remote sync.Map // tool name → its worker pool ("": the queue group): tools served by workers (AddRemoteTools, AddPooledTools)
	// js publishes the calls of pooled tools; poolStream is the pool
	// stream's handle once looked up (see Host.workerQueue).
	js         jetstream.JetStream
	poolMu     sync.Mutex
	poolStream jetstream.Stream
	// poolStored, when set (by tests), is called by the goroutine of a
	// pooled call's publish once the stream acknowledged it: before the
	// goroutine settles the publish (settled false), and after, before
	// the acknowledgement goes to the scheduler (settled true).
	poolStored func(settled bool)

	// bg counts the goroutines that publish pooled calls into the pool
	// stream or take them out of it (see background): Close waits for
	// them, so the calls of the runs it stops are withdrawn before the
	// connection closes. bgMu orders their Adds before that Wait.
	bg       sync.WaitGroup
	bgMu     sync.Mutex
	bgClosed bool

	// dispatch runs the host's actors' mailboxes; props spawn them on it.
	dispatch *dispatcher
	props    []actor.PropsOption
	// live publishes the live copies of appended events (nil without
	// HostConfig.PublishEvents).
	live *livePublisher
}

// runEntry is what the tool host needs to execute the calls of one run:
// the registry of its current step and the run's lifetime context, which
// the session actor cancels to cancel the run's tools.
type runEntry struct {
	mu     sync.RWMutex
	reg    *toolsets.Registry
	batch  []BatchCall     // the calls of the batch last dispatched, in model order
	meta   map[string]any  // the run's metadata, read-only
	ctx    context.Context // the run's lifetime, owned by the session actor
	cancel context.CancelCauseFunc
	hooks  []toolsets.Hook // the agent's tool hooks, run around remote calls
}

func runKey(session, run string) string { return session + "\x00" + run }

// NewHost starts a host: its actor system, the command subscription
// (weft.cmd.session.*.*) and the subscription to the reports of the calls
// it sends to remote workers.
func NewHost(cfg HostConfig) (*Host, error) {
	if cfg.Conn == nil || cfg.Store == nil {
		return nil, errors.New("actors: host needs a NATS connection and a store")
	}
	subj := cfg.Subjects
	if subj.Root() == "" {
		subj = bus.Default
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	h := &Host{
		cfg: cfg, subj: subj, log: logger,
		system:   actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(discard{}) })),
		agents:   map[string]*agentVersions{},
		sessions: map[string]sessionRef{},
		watchers: map[string][]chan Outcome{},
		dispatch: newDispatcher(),
		done:     make(chan struct{}),
	}
	h.life, h.endLife = context.WithCancel(context.Background())
	h.storeLife, h.endStore = context.WithCancel(context.Background())
	h.payload = PayloadLimits{Bus: int(cfg.Conn.MaxPayload()), Max: payloadMax(cfg), Blobs: cfg.Blobs}
	if h.payload.Blobs == nil {
		h.payload.Blobs, _ = cfg.Store.(events.BlobStore)
	}
	h.props = []actor.PropsOption{actor.WithDispatcher(h.dispatch)}
	if h.js, err = jetstream.New(cfg.Conn); err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	h.system.EventStream.Subscribe(h.onDeadLetter)
	if cfg.PublishEvents {
		h.live = newLivePublisher(h)
	}
	// The host serves every session it is asked about, so it subscribes
	// to the wildcard form bus builds.
	var cmdSub *nats.Subscription
	if cfg.Leases != nil {
		cmdSub, err = cfg.Conn.QueueSubscribe(subj.AllCommands(), CommandQueueGroup, h.onCommand)
	} else {
		cmdSub, err = cfg.Conn.Subscribe(subj.AllCommands(), h.onCommand)
	}
	if err != nil {
		return nil, fmt.Errorf("subscribe to commands: %w", err)
	}
	h.replyPrefix = cfg.Conn.NewInbox()
	replySub, err := cfg.Conn.Subscribe(bus.ReplyFilter(h.replyPrefix), h.onToolReport)
	if err != nil {
		_ = cmdSub.Unsubscribe()
		return nil, fmt.Errorf("subscribe to tool reports: %w", err)
	}
	h.subs = []*nats.Subscription{cmdSub, replySub}
	if cfg.Leases != nil {
		nodeSub, err := h.startOwnership()
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("subscribe to node commands: %w", err)
		}
		h.subs = append(h.subs, nodeSub)
	}
	if err := cfg.Conn.Flush(); err != nil {
		h.Close()
		return nil, fmt.Errorf("flush subscriptions: %w", err)
	}
	return h, nil
}

// onToolReport routes a tool report to the scheduler whose reply subject
// it arrived on; reports of a scheduler that has stopped are dropped.
func (h *Host) onToolReport(m *nats.Msg) {
	pid, ok := h.replies.Load(m.Subject)
	if !ok {
		return
	}
	var r ToolReport
	if err := json.Unmarshal(m.Data, &r); err != nil {
		h.log.Warn("bad tool report", "subject", m.Subject, "err", err)
		return
	}
	// A return by reference is read by the scheduler (resolveReturn).
	h.system.Root.Send(pid.(*actor.PID), &r)
}

// newReplySubject returns a fresh reply subject for scheduler pid.
func (h *Host) newReplySubject(pid *actor.PID) string {
	subject := bus.ReplySubject(h.replyPrefix, h.replySeq.Add(1))
	h.replies.Store(subject, pid)
	return subject
}

// discard is a slog handler that drops everything (protoactor's logs).
type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }

// Subjects returns the host's subject scheme.
func (h *Host) Subjects() bus.Subjects { return h.subj }

// AttachRunToolsets attaches toolsets to run runID only, besides its
// agent's: call it before the start command (they are Go values, kept in
// this process's memory; a run recovered by another process, or after a
// restart, runs without them). They are driven like the agent's, each by
// its own Lifecycle, and forgotten when the run ends.
func (h *Host) AttachRunToolsets(runID string, tss ...toolsets.Toolset) {
	if len(tss) == 0 {
		return
	}
	h.runToolsets.Store(runID, slices.Clone(tss))
}

// runLifecycles returns the drivers of run runID's own toolsets, building
// them on first use.
func (h *Host) runLifecycles(runID string, prepareTimeout time.Duration) []*toolsets.Lifecycle {
	if v, ok := h.runLCs.Load(runID); ok {
		return v.([]*toolsets.Lifecycle)
	}
	v, ok := h.runToolsets.Load(runID)
	if !ok {
		return nil
	}
	tss := v.([]toolsets.Toolset)
	lcs := make([]*toolsets.Lifecycle, len(tss))
	for i, ts := range tss {
		lcs[i] = newLifecycle(ts, prepareTimeout)
	}
	got, _ := h.runLCs.LoadOrStore(runID, lcs)
	return got.([]*toolsets.Lifecycle)
}

// forgetRun drops run runID's own toolsets once they have exited.
func (h *Host) forgetRun(runID string) {
	h.runToolsets.Delete(runID)
	h.runLCs.Delete(runID)
}

// onCommand routes a command message to its session actor, spawning (and
// so rebuilding) the actor when the session has none in this process.
func (h *Host) onCommand(m *nats.Msg) {
	if !replyIsInbox(m.Reply) {
		// A reply subject outside the inboxes would make this node, which
		// may publish anywhere, answer on a subject its sender may not
		// publish on (a worker cancel, an event the log would store): the
		// command is dropped unanswered and unexecuted.
		h.log.Warn("dropped a command whose reply subject is not an inbox", "subject", m.Subject, "reply", m.Reply)
		return
	}
	id, verb, err := h.subj.ParseCommand(m.Subject)
	if err != nil {
		respond(m, CommandReply{Error: commandError(verb, id, ErrBadCommand, "bad command subject %q: %v", m.Subject, err)})
		return
	}
	if verb == VerbResume && claimsAuthenticated(m.Data) {
		respond(m, CommandReply{Error: commandError(verb, id, ErrBadCommand, "a client's decision cannot claim to be authenticated: only a node's API sets it")})
		return
	}
	if h.cfg.Leases != nil && !h.leased(m, id, verb) {
		return
	}
	h.deliver(m, id, verb)
}

// claimsAuthenticated reports whether the resume command data sets a
// decision's authenticated flag, which a client on the command subjects
// may not (the nodes' own forwards use the node subjects); data that does
// not decode is left to the session, which refuses it.
func claimsAuthenticated(data []byte) bool {
	if !bytes.Contains(data, []byte(`"authenticated"`)) {
		return false
	}
	var cmd ResumeCommand
	if json.Unmarshal(data, &cmd) != nil {
		return false
	}
	return slices.ContainsFunc(cmd.Decisions, func(d Decision) bool { return d.Authenticated })
}

// replyIsInbox reports whether reply is empty or under InboxPrefix.
func replyIsInbox(reply string) bool {
	return reply == "" || strings.HasPrefix(reply, InboxPrefix+".") || strings.HasPrefix(reply, InboxPrefix+"_")
}

func respond(m *nats.Msg, r CommandReply) {
	b, _ := json.Marshal(r) // a reply always encodes
	_ = m.Respond(b)
}

// sessionRef is a session actor of this host, and its mailbox (which the
// senders of carried messages run).
type sessionRef struct {
	pid *actor.PID
	box *mailbox
}

// carry posts msg to session actor ref and runs its mailbox in the
// calling goroutine (see carried): for a goroutine that has nothing else
// to do until the session answers, or that ends after sending.
func (h *Host) carry(ref sessionRef, msg carried) {
	msg.markCarried()
	h.system.Root.Send(ref.pid, msg)
	ref.box.carry(false)
}

// session returns the actor of session id, spawning it if needed.
func (h *Host) session(id string) (sessionRef, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionLocked(id, false)
}

// sessionLocked is session, called with h.mu held; an actor spawned for a
// new session (see StartNew) starts without reading its stream.
func (h *Host) sessionLocked(id string, newSession bool) (sessionRef, error) {
	if h.closed {
		return sessionRef{}, ErrHostClosed
	}
	if ref, ok := h.sessions[id]; ok {
		return ref, nil
	}
	stream := events.SessionStream(id)
	if err := events.ValidateStream(stream); err != nil {
		return sessionRef{}, err
	}
	box := &mailbox{newStream: newSession}
	props := actor.PropsFromProducer(func() actor.Actor { return newSessionActor(h, id, stream, box) }, h.props...).
		Configure(actor.WithMailbox(func() actor.Mailbox { return box }))
	ref := sessionRef{pid: h.system.Root.Spawn(props), box: box}
	h.sessions[id] = ref
	return ref, nil
}

// Outcome is the state of a run when it settles (waits or ends): what a
// caller of Run gets back.
type Outcome struct {
	SessionID string
	RunID     string
	Status    RunStatus
	Output    string
	Usage     events.Usage
	// Messages is the session's whole conversation as it stands: the
	// earlier runs' messages, then this run's (see Result.Messages).
	Messages []llm.Message
	Pending  []PendingItem
	Error    *events.ErrorInfo
	// Version is the session's version when the run settled.
	Version uint64
	// Metadata is the run's metadata from run.started (read-only).
	Metadata map[string]any
	// Lost, when not nil, says that the run did not settle: the session's
	// actor that drove it stopped without recording its end (see
	// Host.lose). It matches ErrUnavailable; Status is empty (no status
	// the log records), and only SessionID and RunID are set besides.
	// Nothing of it is in the log, where the run is still running: the
	// session's next command rebuilds its actor, which carries the run
	// on, and the watchers hear its outcome then.
	Lost error
}

// Outcome returns the outcome of run id as the state stands.
func (s *SessionState) Outcome(id string) (Outcome, bool) {
	r := s.Runs[id]
	if r == nil {
		return Outcome{}, false
	}
	// The session's full history: an ended run's messages are already in
	// History; an active (waiting) run's follow it.
	msgs := s.History
	if !r.Status.Ended() {
		msgs = s.Conversation(r)
	}
	o := Outcome{SessionID: s.SessionID, RunID: id, Status: r.Status, Output: r.Output, Usage: r.Usage,
		Messages: cloneMessages(msgs), Version: s.Version, Metadata: r.Metadata}
	if r.Error != nil {
		e := *r.Error
		o.Error = &e
	}
	if r.Status == StatusWaiting {
		o.Pending = r.Pending()
	}
	return o, true
}

func cloneMessages(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out
}

// Watch returns a channel that receives the outcome of run id each time it
// settles (waiting, or ended), and a function that stops the watch. It
// also receives an Outcome with Lost set when the session's actor stops
// without settling the run: not an outcome of the log (see Outcome.Lost).
// Register the watch before sending the command whose outcome you want.
func (h *Host) Watch(runID string) (<-chan Outcome, func()) {
	ch := make(chan Outcome, 4)
	h.mu.Lock()
	h.watchers[runID] = append(h.watchers[runID], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		ws := h.watchers[runID]
		for i, w := range ws {
			if w == ch {
				h.watchers[runID] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(h.watchers[runID]) == 0 {
			delete(h.watchers, runID)
		}
	}
}

// background runs fn in a goroutine of its own that Close waits for; once
// Close waits, in one it does not wait for.
func (h *Host) background(fn func()) {
	h.bgMu.Lock()
	if h.bgClosed {
		h.bgMu.Unlock()
		go fn()
		return
	}
	h.bg.Add(1)
	h.bgMu.Unlock()
	go func() {
		defer h.bg.Done()
		fn()
	}()
}

// Done returns a channel closed when Close begins: a caller waiting for a
// run's outcome (Watch) stops waiting then, the host hears no more.
func (h *Host) Done() <-chan struct{} { return h.done }

// Drives reports whether this host has a session actor for session id:
// with leases, whether this node drives the session now. Watch hears the
// runs of the sessions a host drives only.
func (h *Host) Drives(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.sessions[id]
	return ok
}

func (h *Host) notify(o Outcome) {
	h.mu.Lock()
	h.tellLocked(o)
	obs := h.observers
	h.mu.Unlock()
	for _, fn := range obs {
		fn(o)
	}
}

// lose tells the watchers of run runID of session that the session's
// actor stopped without settling it (Outcome.Lost, wrapping
// ErrUnavailable with why): a caller waiting for the run's outcome hears
// at once, rather than when its context ends. The observers (OnSettled)
// are not told: the run did not settle.
func (h *Host) lose(session, runID, why string) {
	o := Outcome{SessionID: session, RunID: runID,
		Lost: fmt.Errorf("%w: the actor of session %q stopped without settling run %q (%s); the session's next command carries the run on", ErrUnavailable, session, runID, why)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tellLocked(o)
}

// tellLocked hands o to the watchers of its run; h.mu is held.
func (h *Host) tellLocked(o Outcome) {
	for _, ch := range h.watchers[o.RunID] {
		select {
		case ch <- o:
		default: // a watcher that does not read loses intermediate outcomes
		}
	}
}

// ReadSession folds the stream of session id into a state. A session with
// no events gives an empty state.
func (h *Host) ReadSession(ctx context.Context, id string) (*SessionState, error) {
	st := NewSessionState(id)
	evs, err := h.cfg.Store.ReadStream(ctx, events.SessionStream(id), 0)
	if errors.Is(err, events.ErrStreamNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if err := st.Apply(ev); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// Recover scans the log for sessions whose last run is still running (the
// process that ran it stopped) and starts their session actors, which
// rebuild from their streams and carry the runs on. Waiting runs need no
// recovery: their session actor is rebuilt when a command arrives. Register
// every agent first. It returns the ids of the sessions it restarted (with
// leases: those this node drives now, whether it drove them already or
// has just taken their lease).
//
// Poison never stops it: a session whose stream holds poison (see
// events.PoisonError) or events its fold refuses is damaged. Recover logs
// each one with its id and the poison, carries every other session on,
// and then returns the restarted ids together with a *DamagedError
// (ErrSessionDamaged) listing the damaged running sessions. Poison in a
// session that was not running is logged only.
//
// Recover reads the whole log: call it when a node starts. On a cluster,
// WatchLeases then takes over the running sessions of nodes that die,
// reading only their streams.
func (h *Host) Recover(ctx context.Context) ([]string, error) {
	return h.RecoverWith(ctx, nil)
}

// RecoverWith is Recover, and it shows visit (when not nil) every event
// its read of the whole log yields, in log order, whatever its stream:
// the other start-up steps that need the whole log (sub-run recovery,
// the count of waiting sessions) fold it from this one read instead of
// reading it again. visit sees the log as it was before any session is
// carried on, and only the events the store could decode as events:
// poison (*events.PoisonError) is logged here and not shown, as those
// steps skip it. visit runs on the caller's goroutine and must not call
// the host. A visitor, not a summary of the scan, keeps this package
// ignorant of what the packages above it fold.
func (h *Host) RecoverWith(ctx context.Context, visit func(events.Event)) ([]string, error) {
	running := map[string]bool{}
	var handlers handlerScan // sessions whose error handlers are due
	poisoned := map[string]error{}
	var order []string
	for ev, err := range h.cfg.Store.ReadAll(ctx, 0) {
		var poison *events.PoisonError
		if errors.As(err, &poison) {
			h.log.Error("recover: poison in the log", "session", poison.SessionID(), "stream", poison.Stream, "position", poison.Position, "err", err)
			if id := poison.SessionID(); id != "" && poisoned[id] == nil {
				poisoned[id] = err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recover: %w", err)
		}
		if visit != nil {
			visit(ev)
		}
		if ev.SessionID == "" || ev.Stream != events.SessionStream(ev.SessionID) {
			continue
		}
		was, seen := running[ev.SessionID]
		if !seen {
			order = append(order, ev.SessionID)
		}
		running[ev.SessionID] = stillRunning(was, ev.Type)
		handlers.observe(ev)
	}
	var out []string
	var damaged []DamagedSession
	for _, id := range order {
		if !running[id] && !handlers.due(id) {
			continue
		}
		damage := poisoned[id]
		if damage == nil {
			var err error
			if damage, err = h.checkSession(ctx, id); err != nil {
				return out, fmt.Errorf("recover session %q: %w", id, err)
			}
		}
		if damage != nil {
			h.log.Error("recover: session damaged, not carried on", "session", id, "err", damage)
			damaged = append(damaged, DamagedSession{ID: id, Err: damage})
			continue
		}
		ok, err := h.carryOn(ctx, id)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, id)
		}
	}
	if len(damaged) > 0 {
		return out, &DamagedError{Sessions: damaged}
	}
	return out, nil
}

// stillRunning is the rule of recovery, one event at a time: given whether
// a session's last run was running before an event of type t, it returns
// whether it is running after. A run is running from its run.started or
// run.resumed until its run.waiting, run.completed, run.failed or
// run.cancelled.
func stillRunning(running bool, t events.Type) bool {
	switch t {
	case events.TypeRunStarted, events.TypeRunResumed:
		return true
	case events.TypeRunWaiting, events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
		return false
	}
	return running
}

// carryOn starts the actor of session id, whose last run is running, and
// asks it to carry the run on. With leases it first takes the session's
// lease (create-if-absent: of nodes racing for it, one wins) and returns
// false, doing nothing, when another node holds it.
func (h *Host) carryOn(ctx context.Context, id string) (bool, error) {
	if h.cfg.Leases != nil {
		owner, err := h.cfg.Leases.Acquire(ctx, id)
		if err != nil {
			return false, fmt.Errorf("recover session %q: %w", id, err)
		}
		if owner != h.cfg.Leases.Node() {
			return false, nil // another live node drives it
		}
	}
	ref, err := h.session(id)
	if err != nil {
		return false, fmt.Errorf("recover session %q: %w", id, err)
	}
	h.system.Root.Send(ref.pid, &advance{})
	return true, nil
}

// Close stops the host: its subscriptions, then every actor, cancelling
// the runs' local tools (remote calls are left to the node that carries
// the runs on). It stops the session actors together, ending their store
// calls still in flight after a grace period (see stopSessions). It waits for the deletes of its pooled calls still queued
// in the pool stream (up to 5 s each when JetStream does not answer). It
// does not close the connection or the store.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.done)
	h.endLife()
	pids := make([]*actor.PID, 0, len(h.sessions))
	for _, ref := range h.sessions {
		pids = append(pids, ref.pid)
	}
	h.mu.Unlock()
	for _, s := range h.subs {
		_ = s.Unsubscribe()
	}
	h.stopSessions(pids)
	if h.live != nil {
		h.live.close() // the stopped actors' last copies go out first
	}
	h.stopOwnership(true)
	h.runs.Range(func(k, v any) bool {
		v.(*runEntry).cancel(errors.New("host closed"))
		return true
	})
	h.system.Shutdown()
	h.dispatch.close()
	h.bgMu.Lock()
	h.bgClosed = true
	h.bgMu.Unlock()
	h.bg.Wait()
	// Wait for lifecycle steps abandoned after their timeouts.
	h.mu.Lock()
	specs := make([]*AgentSpec, 0, len(h.agents))
	for _, av := range h.agents {
		for _, sp := range av.versions {
			specs = append(specs, sp)
		}
	}
	h.mu.Unlock()
	for _, sp := range specs {
		for _, lc := range sp.lifecycles {
			lc.Wait()
		}
	}
	h.runLCs.Range(func(_, v any) bool {
		for _, lc := range v.([]*toolsets.Lifecycle) {
			lc.Wait()
		}
		return true
	})
	return nil
}

// publish hands the live copies of evs to the host's publisher, when the
// host is configured to publish them (HostConfig.PublishEvents).
func (h *Host) publish(evs []record) {
	if h.live != nil {
		h.live.enqueue(evs)
	}
}
